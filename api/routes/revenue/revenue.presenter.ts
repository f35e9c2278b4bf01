import type { z } from 'zod';
import type { RecommendationsResponseSchema, RevenueResponseSchema } from './revenue.schema.ts';
import { round1 } from '../../../shared/domain/score-summary.ts';
import { signalDefinition } from '../../../shared/domain/signal-catalog.ts';
import type { SdkConfig } from '../../../shared/tenancy/sdk-config.ts';
import { money, rate, revenueAtRisk } from './conversion.ts';
import { REVENUE_WINDOW_DAYS, type IssueConversionRow } from './revenue.queries.ts';

export const REVENUE_METHOD =
  'For each open issue over the last 30 days: (conversion rate of calm sessions on its page - conversion rate of sessions that met the issue) x sessions that met the issue x average conversion value; a gap at or below zero counts 0. Calm sessions viewed the page with no weighted signal there; sessions that met the issue had a signal of its type on its element.';

const rate4 = (r: number | null) => (r === null ? null : Math.round(r * 10_000) / 10_000);

/** Why revenue cannot be estimated, or null when it can. */
export function revenueUnavailable(config: SdkConfig['revenue_config'], convertingSessions: number): string | null {
  if (!config.enabled)
    return 'revenue tracking is off: set revenue_config.enabled in the SDK config (PATCH /v1/manage/sdk-config/production)';
  if (convertingSessions === 0)
    return `no ${config.conversion_event} events in the last ${REVENUE_WINDOW_DAYS} days: the SDK must send them (type conversion with a value, or a custom event named by revenue_config.conversion_event)`;
  return null;
}

/** `/query/revenue` when tracking is wired. */
export function presentRevenue(
  siteId: string,
  config: SdkConfig['revenue_config'],
  averageValue: number | null,
  issues: IssueConversionRow[],
): z.output<typeof RevenueResponseSchema> {
  const rows = issues
    .map((i) => ({
      issue_id: i.id,
      title: i.title,
      page: i.page,
      signal_type: i.signal_type,
      affected_sessions: i.affected,
      conversion_rate_affected: rate4(rate(i.affected_converted, i.affected)),
      conversion_rate_calm: rate4(rate(i.calm_converted, i.calm)),
      calm_sessions: i.calm,
      revenue_at_risk: revenueAtRisk(i, averageValue),
    }))
    .sort((a, b) => (b.revenue_at_risk ?? -1) - (a.revenue_at_risk ?? -1));
  return {
    site_id: siteId,
    enabled: true,
    reason: null,
    currency: config.currency,
    conversion_event: config.conversion_event,
    window_days: REVENUE_WINDOW_DAYS,
    method: REVENUE_METHOD,
    average_conversion_value: averageValue === null ? null : money(averageValue),
    total_at_risk: money(rows.reduce((sum, r) => sum + (r.revenue_at_risk ?? 0), 0)),
    issues: rows,
  };
}

/** `/query/revenue` when tracking is not wired: 200 with the reason. */
export function presentRevenueOff(
  siteId: string,
  config: SdkConfig['revenue_config'],
  reason: string,
): z.output<typeof RevenueResponseSchema> {
  return {
    site_id: siteId,
    enabled: false,
    reason,
    currency: config.currency,
    conversion_event: config.conversion_event,
    window_days: REVENUE_WINDOW_DAYS,
    method: REVENUE_METHOD,
    average_conversion_value: null,
    total_at_risk: null,
    issues: [],
  };
}

/** The catalog's fix made specific to the element and page. */
export function specificRecommendation(
  i: Pick<IssueConversionRow, 'page' | 'selector' | 'label' | 'signal_type'>,
): string {
  const element = i.label ? `"${i.label}" (${i.selector})` : i.selector;
  const fix =
    signalDefinition(i.signal_type)?.recommendation ??
    `Find out why ${i.signal_type} signals cluster here and remove the cause.`;
  return `On ${i.page}, ${element}: ${fix}`;
}

/**
 * `/query/recommendations`: one fix per active issue, ranked by revenue at risk when it is known, then severity,
 * then affected sessions; `total` counts every active issue when `issues` holds only the first ones of that ranking.
 */
export function presentRecommendations(
  siteId: string,
  currency: string | null,
  averageValue: number | null,
  issues: IssueConversionRow[],
  limit: number,
  total = issues.length,
): z.output<typeof RecommendationsResponseSchema> {
  const items = issues
    .map((i) => ({ i, atRisk: currency === null ? null : revenueAtRisk(i, averageValue) }))
    .sort(
      (a, b) =>
        (b.atRisk ?? -1) - (a.atRisk ?? -1) ||
        b.i.severity - a.i.severity ||
        b.i.affected_sessions - a.i.affected_sessions ||
        a.i.id.localeCompare(b.i.id),
    )
    .slice(0, limit)
    .map(({ i, atRisk }, n) => ({
      rank: n + 1,
      recommendation: specificRecommendation(i),
      page: i.page,
      element_selector: i.selector,
      label: i.label,
      signal_type: i.signal_type,
      impact: {
        affected_sessions: i.affected_sessions,
        severity: round1(i.severity),
        revenue_at_risk: atRisk,
        currency,
      },
      closes: { issue_id: i.id, title: i.title },
    }));
  return { site_id: siteId, total, recommendations: items };
}
