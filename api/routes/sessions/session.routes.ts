import Router from '@koa/router';
import type Koa from 'koa';
import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { NotFoundError } from '../../../shared/errors.ts';
import { ok } from '../../../shared/http/envelope.ts';
import { siteQuery } from '../../http/auth.ts';
import { presentSession } from './session.presenter.ts';
import { findSession, sessionTimeline } from './session.queries.ts';
import { SessionQuerySchema } from './session.schema.ts';

/** `/v1/query/session` and the short form `/v1/session`: one session's page views and signals in order; unknown → 404. */
export function sessionRouter(deps: { db: Kysely<Database>; readAuth: Koa.Middleware }): Router {
  const router = new Router();
  const handler: Koa.Middleware = async (ctx) => {
    const q = siteQuery(ctx, SessionQuerySchema);
    const session = await findSession(deps.db, q.site_id, q.environment, q.session_id);
    if (!session) throw new NotFoundError('session not found');
    const rows = await sessionTimeline(deps.db, q.site_id, q.environment, session.id);
    // The first stored event can predate the session row's start when the SDK's clock is behind.
    const started = rows.length > 0 && rows[0].ts < session.started_at ? rows[0].ts : session.started_at;
    ctx.body = ok(presentSession(session.id, started, rows));
  };
  router.get('/v1/query/session', deps.readAuth, handler);
  router.get('/v1/session', deps.readAuth, handler);
  return router;
}
