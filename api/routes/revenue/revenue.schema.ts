import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { EnvironmentParam } from '../../../shared/contracts/environment.ts';
import { DaysParam } from '../../http/common.schema.ts';

export const RevenueQuerySchema = z.object({ site_id: Uuid(), environment: EnvironmentParam });
export const RecommendationsQuerySchema = z.object({
  site_id: Uuid(),
  limit: z.coerce.number().int().min(1).max(100).default(20).describe('fixes listed, 1-100'),
  environment: EnvironmentParam,
});
export const InsightsQuerySchema = z.object({ site_id: Uuid(), days: DaysParam, environment: EnvironmentParam });

const Rate = z.number().min(0).max(1).nullable().describe('0..1, four decimals; null without sessions');

/** `/query/revenue` and `/v1/revenue`: `enabled: false` with the reason when conversion tracking is not wired. */
export const RevenueResponseSchema = z.object({
  site_id: Uuid(),
  enabled: z.boolean(),
  reason: z.string().nullable(),
  currency: z.string(),
  conversion_event: z.string(),
  window_days: z.number().int(),
  method: z.string(),
  average_conversion_value: z.number().nullable(),
  total_at_risk: z.number().nullable(),
  issues: z.array(
    z
      .object({
        issue_id: Uuid(),
        title: z.string(),
        page: z.string(),
        signal_type: z.string(),
        affected_sessions: z.number().int(),
        conversion_rate_affected: Rate,
        conversion_rate_calm: Rate,
        calm_sessions: z.number().int(),
        revenue_at_risk: z.number().nullable(),
      })
      .meta({ id: 'IssueRevenue' }),
  ),
});

/** `/query/recommendations` and `/v1/recommendations`. */
export const RecommendationsResponseSchema = z.object({
  site_id: Uuid(),
  total: z.number().int(),
  recommendations: z.array(
    z
      .object({
        rank: z.number().int(),
        recommendation: z.string(),
        page: z.string(),
        element_selector: z.string(),
        label: z.string().nullable(),
        signal_type: z.string(),
        impact: z.object({
          affected_sessions: z.number().int(),
          severity: z.number(),
          revenue_at_risk: z.number().nullable(),
          currency: z.string().nullable(),
        }),
        closes: z.object({ issue_id: Uuid(), title: z.string() }),
      })
      .meta({ id: 'Recommendation' }),
  ),
});

const InsightGroup = z
  .object({
    key: z.string(),
    confused: z.number().int(),
    confused_converted: z.number().int(),
    calm: z.number().int(),
    calm_converted: z.number().int(),
    conversion_rate_confused: Rate,
    conversion_rate_calm: Rate,
  })
  .meta({ id: 'InsightGroup' });

/** `/query/insights`: empty with the reason when no conversion event was seen. */
export const InsightsResponseSchema = z.object({
  site_id: Uuid(),
  days: z.number().int(),
  conversion_event: z.string(),
  min_group_sessions: z.number().int(),
  enabled: z.boolean(),
  reason: z.string().nullable(),
  pages: z.array(InsightGroup),
  sources: z.array(InsightGroup),
  insights: z.array(
    z
      .object({
        dimension: z.enum(['page', 'source']),
        key: z.string(),
        text: z.string(),
        lost_conversions: z.number(),
        conversion_rate_confused: z.number(),
        conversion_rate_calm: z.number(),
        confused_sessions: z.number().int(),
        calm_sessions: z.number().int(),
      })
      .meta({ id: 'Insight' }),
  ),
});
