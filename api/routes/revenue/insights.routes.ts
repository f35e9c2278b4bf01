import type { z } from 'zod';
import type { ReadDeps } from '../../http/deps.ts';
import type { RouteTable } from '../../http/routes.ts';
import { revenueConfig } from './revenue.queries.ts';
import { InsightsQuerySchema, InsightsResponseSchema } from './revenue.schema.ts';
import { rankInsights, withRates, MIN_GROUP_SESSIONS } from './insights.ts';
import { confusedVersusCalm } from './insights.queries.ts';

/** `/v1/query/insights`: confused versus calm sessions' conversion by page and source, with ranked insights. */
export function insightRoutes(table: RouteTable, deps: ReadDeps): RouteTable {
  return table.read({
    path: '/v1/query/insights',
    tag: 'revenue',
    summary:
      "Confused versus calm sessions' conversion by page and traffic source over days (1-90, default 7), with ranked insight sentences; empty with the reason without a conversion event",
    query: InsightsQuerySchema,
    response: InsightsResponseSchema,
    async handler(_ctx, { query: q }) {
      const { conversion_event } = await revenueConfig(deps.db, q.site_id, q.environment);
      const now = deps.now();
      const from = new Date(now.getTime() - q.days * 86_400_000);
      const scope = { siteId: q.site_id, environment: q.environment, from, to: now };
      const r = await confusedVersusCalm(deps.db, scope, conversion_event);
      const common = { site_id: q.site_id, days: q.days, conversion_event, min_group_sessions: MIN_GROUP_SESSIONS };
      if (r.converting === 0) {
        return {
          ...common,
          enabled: false,
          reason: `no ${conversion_event} events in the last ${q.days} days: insights compare conversion, so the SDK must send them (type conversion, or a custom event named by revenue_config.conversion_event)`,
          pages: [],
          sources: [],
          insights: [],
        } satisfies z.output<typeof InsightsResponseSchema>;
      }
      return {
        ...common,
        enabled: true,
        reason: null,
        pages: r.pages.map(withRates),
        sources: r.sources.map(withRates),
        insights: rankInsights(r.pages, r.sources),
      } satisfies z.output<typeof InsightsResponseSchema>;
    },
  });
}
