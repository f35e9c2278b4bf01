import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { READ_ACCESS } from '../../http/auth.ts';
import type { ReadDeps } from '../../http/deps.ts';
import type { RouteTable } from '../../http/routes.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import { presentRecommendations, presentRevenue, presentRevenueOff, revenueUnavailable } from './revenue.presenter.ts';
import {
  activeIssuesUnmeasured,
  conversionSummary,
  issueConversions,
  revenueConfig,
  REVENUE_WINDOW_DAYS,
} from './revenue.queries.ts';
import {
  RecommendationsQuerySchema,
  RecommendationsResponseSchema,
  RevenueQuerySchema,
  RevenueResponseSchema,
} from './revenue.schema.ts';

/** The site's revenue settings and, when tracking is wired, the average conversion value. */
async function tracking(db: Kysely<Database>, siteId: string, environment: Environment, at: Date) {
  const config = await revenueConfig(db, siteId, environment);
  const summary = config.enabled
    ? await conversionSummary(
        db,
        siteId,
        environment,
        config.conversion_event,
        new Date(at.getTime() - REVENUE_WINDOW_DAYS * 86_400_000),
      )
    : { sessions: 0, average_value: null };
  return { config, summary, off: revenueUnavailable(config, summary.sessions) };
}

/** `/query/recommendations`: the `limit` best-ranked fixes and the count of all. */
export async function siteRecommendations(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  at: Date,
  limit: number,
) {
  const t = await tracking(db, siteId, environment, at);
  // Without tracking the ranking is severity then affected sessions: the conversion groups would go unused.
  const issues =
    t.off === null
      ? await issueConversions(db, siteId, environment, t.config.conversion_event, at)
      : await activeIssuesUnmeasured(db, siteId, environment);
  return presentRecommendations(
    siteId,
    t.off === null ? t.config.currency : null,
    t.summary.average_value,
    issues,
    limit,
  );
}

/** `/v1/query/revenue`, `/v1/query/recommendations` and their short forms `/v1/revenue`, `/v1/recommendations`. */
export function revenueRoutes(table: RouteTable, deps: ReadDeps): RouteTable {
  table.add({
    method: 'get',
    path: '/v1/query/revenue',
    shortForm: { path: '/v1/revenue', summary: 'Revenue at risk (short form; the same shape)' },
    tag: 'revenue',
    summary:
      'Revenue at risk across active issues over 30 days, with the method; enabled false and the reason when conversion tracking is not wired',
    access: READ_ACCESS,
    siteQuery: true,
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
  return table.add({
    method: 'get',
    path: '/v1/query/recommendations',
    shortForm: { path: '/v1/recommendations', summary: 'Ranked fixes (short form; the same shape)' },
    tag: 'revenue',
    summary:
      "Ranked fixes, one per active issue: the catalog's fix made specific to the element and page, its impact and the issue it closes",
    description: 'Ranked by revenue at risk when revenue tracking is wired, then severity, then affected sessions.',
    access: READ_ACCESS,
    siteQuery: true,
    query: RecommendationsQuerySchema,
    response: RecommendationsResponseSchema,
    handler: async (_ctx, { query: q }) => siteRecommendations(deps.db, q.site_id, q.environment, deps.now(), q.limit),
  });
}
