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
import { EDGE_DECORATORS, FlowsQuerySchema, JourneyQuerySchema, type JourneyQuery } from './journeys.schema.ts';

/** `/query/journeys/friction`: friction edges of the latest `q.limit` sessions (spec "Journey friction rules"). */
export async function journeyFriction(db: Kysely<Database>, q: JourneyQuery, at: Date) {
  const types = q.signal_type ? [q.signal_type] : EDGE_DECORATORS;
  const sessions = await journeySessions(db, q.site_id, q.environment, types, q.limit, at);
  const qualifying = new Set(types);
  const edges = journeyFrictionEdges(
    sessions,
    (t) => (qualifying.has(t) ? signalWeight(t) : undefined),
    q.min_friction_weight,
  );
  return presentJourneys(q.site_id, q, sessions.length, edges);
}

/** `/v1/query/journeys/friction`, `/v1/query/flows` and the short form `/v1/flows`. */
export function journeysRouter(deps: { db: Kysely<Database>; readAuth: Koa.Middleware; now?: () => Date }): Router {
  const now = deps.now ?? (() => new Date());
  const router = new Router();
  router.get('/v1/query/journeys/friction', deps.readAuth, async (ctx) => {
    ctx.body = ok(await journeyFriction(deps.db, siteQuery(ctx, JourneyQuerySchema), now()));
  });
  const flows: Koa.Middleware = async (ctx) => {
    const { site_id, environment } = siteQuery(ctx, FlowsQuerySchema);
    ctx.body = ok(presentFlows(site_id, await navigationFlows(deps.db, site_id, environment, now())));
  };
  router.get('/v1/query/flows', deps.readAuth, flows);
  router.get('/v1/flows', deps.readAuth, flows);
  return router;
}
