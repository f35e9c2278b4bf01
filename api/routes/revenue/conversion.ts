/**
 * Conversion arithmetic behind `/query/revenue`, `/query/recommendations` and `/query/insights` (pure).
 *
 * Revenue at risk of an issue = max(0, calm conversion rate − affected conversion rate) × affected sessions ×
 * average conversion value. "Affected" sessions met the issue (a signal of its type on its element and page);
 * "calm" sessions viewed the same page without any weighted signal there. The gap between the two rates is the
 * conversion the friction is likely to cost; a gap at or below zero puts nothing at risk.
 */

export interface ConversionGroups {
  affected: number;
  affected_converted: number;
  calm: number;
  calm_converted: number;
}

/** Converted / sessions, or null when there are no sessions. */
export const rate = (converted: number, sessions: number): number | null =>
  sessions > 0 ? converted / sessions : null;

/** Money rounded to cents. */
export const money = (v: number): number => Math.round(v * 100) / 100;

/** A rate as a percentage with one decimal, for sentences. */
export const percent = (r: number): string => `${Math.round(r * 1000) / 10}%`;

/**
 * Revenue at risk of one issue in the conversion currency; null when it cannot be estimated (no affected or no
 * calm sessions to compare, or no conversion value seen).
 */
export function revenueAtRisk(g: ConversionGroups, averageValue: number | null): number | null {
  const affectedRate = rate(g.affected_converted, g.affected);
  const calmRate = rate(g.calm_converted, g.calm);
  if (affectedRate === null || calmRate === null || averageValue === null) return null;
  return money(Math.max(0, calmRate - affectedRate) * g.affected * averageValue);
}

/** A `revenue_config.conversion_event` of `conversion` means conversion events; any other name, custom events of it. */
export function conversionMatcher(conversionEvent: string): { type: 'conversion' | 'custom'; name: string | null } {
  return conversionEvent === 'conversion'
    ? { type: 'conversion', name: null }
    : { type: 'custom', name: conversionEvent };
}
