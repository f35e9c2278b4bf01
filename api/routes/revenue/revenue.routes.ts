import Router from '@koa/router';
import type Koa from 'koa';
import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { ok } from '../../../shared/http/envelope.ts';
import { siteQuery } from '../../http/auth.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import { presentRecommendations, presentRevenue, presentRevenueOff, revenueUnavailable } from './revenue.presenter.ts';
import { conversionSummary, issueConversions, revenueConfig, REVENUE_WINDOW_DAYS } from './revenue.queries.ts';
import { RecommendationsQuerySchema, RevenueQuerySchema } from './revenue.schema.ts';

/** `/v1/query/revenue`, `/v1/query/recommendations` and their short forms `/v1/revenue`, `/v1/recommendations`. */
export function revenueRouter(deps: { db: Kysely<Database>; readAuth: Koa.Middleware; now?: () => Date }): Router {
  const now = deps.now ?? (() => new Date());
  const router = new Router();
  /** The site's revenue settings and, when tracking is wired, the average conversion value. */
  const tracking = async (siteId: string, environment: Environment, at: Date) => {
    const config = await revenueConfig(deps.db, siteId, environment);
    const summary = config.enabled ? await conversionSummary(deps.db, siteId, environment, config.conversion_event, new Date(at.getTime() - REVENUE_WINDOW_DAYS * 86_400_000)) : { sessions: 0, average_value: null };
    return { config, summary, off: revenueUnavailable(config, summary.sessions) };
  };
  const revenue: Koa.Middleware = async (ctx) => {
    const { site_id, environment } = siteQuery(ctx, RevenueQuerySchema);
    const at = now();
    const t = await tracking(site_id, environment, at);
    if (t.off !== null) {
      ctx.body = ok(presentRevenueOff(site_id, t.config, t.off));
      return;
    }
    ctx.body = ok(presentRevenue(site_id, t.config, t.summary.average_value, await issueConversions(deps.db, site_id, environment, t.config.conversion_event, at)));
  };
  const recommendations: Koa.Middleware = async (ctx) => {
    const q = siteQuery(ctx, RecommendationsQuerySchema);
    const at = now();
    const t = await tracking(q.site_id, q.environment, at);
    const issues = await issueConversions(deps.db, q.site_id, q.environment, t.config.conversion_event, at);
    ctx.body = ok(presentRecommendations(q.site_id, t.off === null ? t.config.currency : null, t.summary.average_value, issues, q.limit));
  };
  router.get('/v1/query/revenue', deps.readAuth, revenue);
  router.get('/v1/revenue', deps.readAuth, revenue);
  router.get('/v1/query/recommendations', deps.readAuth, recommendations);
  router.get('/v1/recommendations', deps.readAuth, recommendations);
  return router;
}
