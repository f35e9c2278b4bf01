import Router from '@koa/router';
import type Koa from 'koa';
import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { ok } from '../../../shared/http/envelope.ts';
import { siteQuery } from '../../http/auth.ts';
import { presentElementHeatmap, presentPageHeatmap } from './heatmaps.presenter.ts';
import { ELEMENT_HEATMAP_MAX_POINTS, recentElementSignals, sampledPageSignals } from './heatmaps.queries.ts';
import { ElementHeatmapQuerySchema, PageHeatmapQuerySchema } from './heatmaps.schema.ts';
import { representativeSample } from './sample.ts';

/** `/v1/query/element-heatmap` and `/v1/query/page-heatmap`. A page or element without signals has no points (200). */
export function heatmapsRouter(deps: { db: Kysely<Database>; readAuth: Koa.Middleware; now?: () => Date }): Router {
  const now = deps.now ?? (() => new Date());
  const router = new Router();
  router.get('/v1/query/element-heatmap', deps.readAuth, async (ctx) => {
    const q = siteQuery(ctx, ElementHeatmapQuerySchema);
    const recent = await recentElementSignals(deps.db, q.site_id, q.environment, q.page, q.selector);
    const points = representativeSample(recent, ELEMENT_HEATMAP_MAX_POINTS, (s) => s.signal_type);
    ctx.body = ok(presentElementHeatmap(q.page, q.selector, recent.length, points));
  });
  router.get('/v1/query/page-heatmap', deps.readAuth, async (ctx) => {
    const q = siteQuery(ctx, PageHeatmapQuerySchema);
    const { rows, total } = await sampledPageSignals(deps.db, q.site_id, q.environment, q.page, q.device, now());
    ctx.body = ok(presentPageHeatmap(q.page, q.device ?? null, total, rows));
  });
  return router;
}
