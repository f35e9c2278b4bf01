import { tracking, siteRecommendations } from './recommendations.ts';
import type { ReadDeps } from '../../http/deps.ts';
import type { RouteTable } from '../../http/routes.ts';
import { presentRevenue, presentRevenueOff } from './revenue.presenter.ts';
import { issueConversions } from './revenue.queries.ts';
import {
  RecommendationsQuerySchema,
  RecommendationsResponseSchema,
  RevenueQuerySchema,
  RevenueResponseSchema,
} from './revenue.schema.ts';

/** `/v1/query/revenue`, `/v1/query/recommendations` and their short forms `/v1/revenue`, `/v1/recommendations`. */
export function revenueRoutes(table: RouteTable, deps: ReadDeps): RouteTable {
  table.read({
    path: '/v1/query/revenue',
    shortForm: 'Revenue at risk (short form; the same shape)',
    tag: 'revenue',
    summary:
      'Revenue at risk across active issues over 30 days, with the method; enabled false and the reason when conversion tracking is not wired',
    query: RevenueQuerySchema,
    response: RevenueResponseSchema,
    async handler(_ctx, { query: { site_id, environment } }) {
      const at = deps.now();
      const t = await tracking(deps.db, site_id, environment, at);
      if (t.off !== null) return presentRevenueOff(site_id, t.config, t.off);
      return presentRevenue(
        site_id,
        t.config,
        t.summary.average_value,
        await issueConversions(deps.db, site_id, environment, t.config.conversion_event, at),
      );
    },
  });
  return table.read({
    path: '/v1/query/recommendations',
    shortForm: 'Ranked fixes (short form; the same shape)',
    tag: 'revenue',
    summary:
      "Ranked fixes, one per active issue: the catalog's fix made specific to the element and page, its impact and the issue it closes",
    description: 'Ranked by revenue at risk when revenue tracking is wired, then severity, then affected sessions.',
    query: RecommendationsQuerySchema,
    response: RecommendationsResponseSchema,
    handler: async (_ctx, { query: q }) => siteRecommendations(deps.db, q.site_id, q.environment, deps.now(), q.limit),
  });
}
