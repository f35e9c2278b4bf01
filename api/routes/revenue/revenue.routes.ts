import Router from '@koa/router';
import type Koa from 'koa';
import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { ok } from '../../../shared/http/envelope.ts';
import { siteQuery } from '../../http/auth.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import { presentRecommendations, presentRevenue, presentRevenueOff, revenueUnavailable } from './revenue.presenter.ts';
import {
  activeIssuesUnmeasured,
  conversionSummary,
  issueConversions,
  revenueConfig,
  REVENUE_WINDOW_DAYS,
} from './revenue.queries.ts';
import { RecommendationsQuerySchema, RevenueQuerySchema } from './revenue.schema.ts';

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
export function revenueRouter(deps: { db: Kysely<Database>; readAuth: Koa.Middleware; now?: () => Date }): Router {
  const now = deps.now ?? (() => new Date());
  const router = new Router();
  const revenue: Koa.Middleware = async (ctx) => {
    const { site_id, environment } = siteQuery(ctx, RevenueQuerySchema);
    const at = now();
    const t = await tracking(deps.db, site_id, environment, at);
    if (t.off !== null) {
      ctx.body = ok(presentRevenueOff(site_id, t.config, t.off));
      return;
    }
    ctx.body = ok(
      presentRevenue(
        site_id,
        t.config,
        t.summary.average_value,
        await issueConversions(deps.db, site_id, environment, t.config.conversion_event, at),
      ),
    );
  };
  const recommendations: Koa.Middleware = async (ctx) => {
    const q = siteQuery(ctx, RecommendationsQuerySchema);
    ctx.body = ok(await siteRecommendations(deps.db, q.site_id, q.environment, now(), q.limit));
  };
  router.get('/v1/query/revenue', deps.readAuth, revenue);
  router.get('/v1/revenue', deps.readAuth, revenue);
  router.get('/v1/query/recommendations', deps.readAuth, recommendations);
  router.get('/v1/recommendations', deps.readAuth, recommendations);
  return router;
}
