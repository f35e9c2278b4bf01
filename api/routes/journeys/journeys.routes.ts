import Router from '@koa/router';
import type Koa from 'koa';
import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { ok } from '../../../shared/http/envelope.ts';
import { signalWeight } from '../../../shared/domain/signal-catalog.ts';
import { siteQuery } from '../../http/auth.ts';
import { journeyFrictionEdges } from './journey-edges.ts';
import { presentFlows, presentJourneys } from './journeys.presenter.ts';
import { journeySessions, navigationFlows } from './journeys.queries.ts';
import { EDGE_DECORATORS, FlowsQuerySchema, JourneyQuerySchema } from './journeys.schema.ts';

/** `/v1/query/journeys/friction`, `/v1/query/flows` and the short form `/v1/flows`. */
export function journeysRouter(deps: { db: Kysely<Database>; readAuth: Koa.Middleware; now?: () => Date }): Router {
  const now = deps.now ?? (() => new Date());
  const router = new Router();
  router.get('/v1/query/journeys/friction', deps.readAuth, async (ctx) => {
    const q = siteQuery(ctx, JourneyQuerySchema);
    const types = q.signal_type ? [q.signal_type] : EDGE_DECORATORS;
    const sessions = await journeySessions(deps.db, q.site_id, q.environment, types, q.limit, now());
    const qualifying = new Set(types);
    const edges = journeyFrictionEdges(sessions, (t) => (qualifying.has(t) ? signalWeight(t) : undefined), q.min_friction_weight);
    ctx.body = ok(presentJourneys(q.site_id, q, sessions.length, edges));
  });
  const flows: Koa.Middleware = async (ctx) => {
    const { site_id, environment } = siteQuery(ctx, FlowsQuerySchema);
    ctx.body = ok(presentFlows(site_id, await navigationFlows(deps.db, site_id, environment, now())));
  };
  router.get('/v1/query/flows', deps.readAuth, flows);
  router.get('/v1/flows', deps.readAuth, flows);
  return router;
}
