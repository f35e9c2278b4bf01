import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { environmentWhere } from '../../../shared/db/environment.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import type { PathEvent } from './journey-edges.ts';

const DAY_MS = 86_400_000;
/** Both journeys and flows look at sessions active in these last days. */
export const JOURNEY_WINDOW_DAYS = 30;
export const FLOW_WINDOW_DAYS = 7;
/** Flows read the paths of at most this many most recently active sessions. */
export const FLOW_MAX_SESSIONS = 1000;
/** Flows list at most this many edges and pages. */
export const FLOW_MAX_EDGES = 100;
export const FLOW_MAX_PAGES = 100;

/**
 * The `limit` most recently active sessions of the last JOURNEY_WINDOW_DAYS with at least one signal of `types`,
 * with their page views and signals (signal confidence from the event's `meta.confidence`, when the SDK sent it).
 */
export async function journeySessions(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  types: readonly string[],
  limit: number,
  now: Date,
): Promise<{ id: string; events: PathEvent[] }[]> {
  const since = new Date(now.getTime() - JOURNEY_WINDOW_DAYS * DAY_MS);
  const sessions = await db
    .selectFrom('sessions as s')
    .select('s.id')
    .where('s.site_id', '=', siteId)
    .where('s.last_seen_at', '>=', since)
    .where(environmentWhere(environment, 's.environment'))
    // The session's signal events, found through events' (site, session, ts) index: `signals` has no session index,
    // so probing it scanned the site's signals once per candidate session (3.6 s p95 at 100k events).
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('events as g')
          .select(sql`1`.as('one'))
          .where('g.site_id', '=', siteId)
          .whereRef('g.session_id', '=', 's.id')
          .where('g.ts', '>=', since)
          .where(environmentWhere(environment, 'g.environment'))
          .where('g.type', '=', 'signal')
          .where('g.signal', 'in', [...types]),
      ),
    )
    .orderBy('s.last_seen_at', 'desc')
    .orderBy('s.id')
    .limit(limit)
    .execute();
  if (sessions.length === 0) return [];
  const ids = sessions.map((s) => s.id);
  const rows = await db
    .selectFrom('events')
    .select([
      'session_id',
      'type',
      'page',
      'ts',
      'signal',
      'selector',
      sql<
        number | null
      >`case when jsonb_typeof(meta->'confidence') = 'number' then (meta->>'confidence')::float8 end`.as('confidence'),
    ])
    .where('site_id', '=', siteId)
    .where('session_id', 'in', ids)
    .where(environmentWhere(environment))
    .where('type', 'in', ['page_view', 'signal'])
    .where('ts', '>=', since)
    .orderBy('ts')
    .execute();
  const bySession = new Map<string, PathEvent[]>(ids.map((id) => [id, []]));
  for (const r of rows) {
    bySession.get(r.session_id)?.push({
      type: r.type as PathEvent['type'],
      page: r.page,
      ts: r.ts.getTime(),
      signal: r.signal ?? undefined,
      selector: r.selector,
      confidence: r.confidence ?? undefined,
    });
  }
  return ids.map((id) => ({ id, events: bySession.get(id)! }));
}

/**
 * Page-to-page navigation of the FLOW_MAX_SESSIONS most recently active sessions of the last FLOW_WINDOW_DAYS:
 * consecutive page views as edges (busiest first), and per page its views, entries (first view of a session) and
 * exits (last view).
 */
export async function navigationFlows(db: Kysely<Database>, siteId: string, environment: Environment, now: Date) {
  const since = new Date(now.getTime() - FLOW_WINDOW_DAYS * DAY_MS);
  const views = sql`
    select e.session_id, e.page,
           lag(e.page) over (partition by e.session_id order by e.ts, e.id) as prev,
           row_number() over (partition by e.session_id order by e.ts, e.id) as first_rank,
           row_number() over (partition by e.session_id order by e.ts desc, e.id desc) as last_rank
    from events e
    where e.site_id = ${siteId} and e.type = 'page_view' and e.ts >= ${since} and ${environmentWhere(environment, 'e.environment')}
      and e.session_id in (
        select id from sessions where site_id = ${siteId} and last_seen_at >= ${since} and ${environmentWhere(environment)}
        order by last_seen_at desc, id limit ${FLOW_MAX_SESSIONS})`;
  const [edges, pages, analysed] = await Promise.all([
    sql<{ from: string; to: string; sessions: number; transitions: number }>`
      select prev as "from", page as "to", count(distinct session_id)::int as sessions, count(*)::int as transitions
      from (${views}) v where prev is not null
      group by prev, page
      order by transitions desc, sessions desc, prev, page
      limit ${FLOW_MAX_EDGES}`.execute(db),
    sql<{ page: string; views: number; entries: number; exits: number }>`
      select page, count(*)::int as views,
             (count(*) filter (where first_rank = 1))::int as entries,
             (count(*) filter (where last_rank = 1))::int as exits
      from (${views}) v
      group by page
      order by views desc, page
      limit ${FLOW_MAX_PAGES}`.execute(db),
    sql<{ n: number }>`select count(distinct session_id)::int as n from (${views}) v`.execute(db),
  ]);
  return { edges: edges.rows, pages: pages.rows, sessions: analysed.rows[0]?.n ?? 0 };
}
