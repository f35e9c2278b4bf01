import type { ReadDeps } from '../../http/deps.ts';
import type { RouteTable } from '../../http/routes.ts';
import { presentSession } from './session.presenter.ts';
import { findSession, sessionTimeline } from './session.queries.ts';
import { SessionQuerySchema, SessionResponseSchema } from './session.schema.ts';

/** `/v1/query/session` and the short form `/v1/session`: one session's page views and signals in order; unknown → 404. */
export function sessionRoutes(table: RouteTable, deps: ReadDeps): RouteTable {
  return table.read({
    path: '/v1/query/session',
    shortForm: "One session's timeline (short form; the same shape)",
    tag: 'sessions',
    summary: "One session's page views and signals in order (each event has occurred_at and timestamp)",
    description: '404 for an unknown session. At most 5000 events; truncated says when there were more.',
    query: SessionQuerySchema,
    notFound: 'session not found',
    response: SessionResponseSchema,
    async handler(_ctx, { query: q }) {
      const session = await findSession(deps.db, q.site_id, q.environment, q.session_id);
      if (!session) return undefined;
      const rows = await sessionTimeline(deps.db, q.site_id, q.environment, session.id);
      // The first stored event can predate the session row's start when the SDK's clock is behind.
      const started = rows.length > 0 && rows[0].ts < session.started_at ? rows[0].ts : session.started_at;
      return presentSession(session.id, started, rows);
    },
  });
}
