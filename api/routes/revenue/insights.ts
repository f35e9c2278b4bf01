import { percent, rate } from './conversion.ts';
import type { GroupRow } from './insights.queries.ts';

/** Fewest sessions in each group (confused and calm) for a page or source to produce an insight. */
export const MIN_GROUP_SESSIONS = 5;
/** Most insights listed. */
export const MAX_INSIGHTS = 10;

export interface Insight {
  dimension: 'page' | 'source';
  key: string;
  text: string;
  /** (calm rate − confused rate) × confused sessions: conversions the friction likely cost, one decimal. */
  lost_conversions: number;
  conversion_rate_confused: number;
  conversion_rate_calm: number;
  confused_sessions: number;
  calm_sessions: number;
}

const rate4 = (r: number) => Math.round(r * 10_000) / 10_000;

/** One group's numbers with its rates. */
export function withRates(g: GroupRow) {
  return {
    ...g,
    conversion_rate_confused: nullableRate(g.confused_converted, g.confused),
    conversion_rate_calm: nullableRate(g.calm_converted, g.calm),
  };
}
const nullableRate = (c: number, n: number) => {
  const r = rate(c, n);
  return r === null ? null : rate4(r);
};

/**
 * Ranked insight sentences (pure): every page and source with at least MIN_GROUP_SESSIONS confused and calm
 * sessions where confused sessions convert less, most lost conversions first.
 */
export function rankInsights(pages: readonly GroupRow[], sources: readonly GroupRow[]): Insight[] {
  const out: Insight[] = [];
  const consider = (dimension: Insight['dimension'], g: GroupRow) => {
    if (g.confused < MIN_GROUP_SESSIONS || g.calm < MIN_GROUP_SESSIONS) return;
    const confusedRate = g.confused_converted / g.confused;
    const calmRate = g.calm_converted / g.calm;
    if (calmRate <= confusedRate) return;
    const lost = Math.round((calmRate - confusedRate) * g.confused * 10) / 10;
    const where = dimension === 'page' ? `on ${g.key}` : `from ${g.key}`;
    out.push({
      dimension,
      key: g.key,
      text: `Visitors ${where} who met friction converted at ${percent(confusedRate)} against ${percent(calmRate)} for calm visitors (${g.confused} confused, ${g.calm} calm sessions): about ${lost} conversions lost.`,
      lost_conversions: lost,
      conversion_rate_confused: rate4(confusedRate),
      conversion_rate_calm: rate4(calmRate),
      confused_sessions: g.confused,
      calm_sessions: g.calm,
    });
  };
  for (const g of pages) consider('page', g);
  for (const g of sources) consider('source', g);
  return out
    .sort(
      (a, b) =>
        b.lost_conversions - a.lost_conversions || a.dimension.localeCompare(b.dimension) || a.key.localeCompare(b.key),
    )
    .slice(0, MAX_INSIGHTS);
}
