import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { environmentWhere } from '../../../shared/db/environment.ts';
import type { SiteScope } from '../../../shared/db/scope.ts';
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
  { site_id: siteId, environment }: SiteScope,
  types: readonly string[],
  limit: number,
  now: Date,
): Promise<{ id: string; events: PathEvent[] }[]> {
  const since = new Date(now.getTime() - JOURNEY_WINDOW_DAYS * DAY_MS);
  // The most recently active sessions that stored a signal (`signal_count > 0`: necessary for a signal of `types`),
  // newest first, a page at a time (journeys_recent_sessions_idx); each page's sessions with a signal of `types` in
  // the window are found by one probe of events' (site, session, ts) index (`signals` has no session index). One
  // EXISTS per session in a single statement was planned as a semi-join over every session of the window (the
  // planner cannot tell how many have such a signal): 4.5 s at 1M demo events for 102,793 probes, where the first
  // 1,000 matches were among the newest.
  const ids: string[] = [];
  // Where the next page starts: the last session's activity in microseconds (exact, where a Date would round).
  let after: { atMicros: string; id: string } | undefined;
  for (let page = Math.max(limit, 100); ids.length < limit; page = Math.min(page * 2, 20_000)) {
    const candidates = await db
      .selectFrom('sessions as s')
      .select(['s.id', sql<string>`(extract(epoch from s.last_seen_at) * 1000000)::bigint::text`.as('at_micros')])
      .where('s.site_id', '=', siteId)
      .where('s.last_seen_at', '>=', since)
      .where('s.signal_count', '>', 0)
      .where(environmentWhere(environment, 's.environment'))
      .$if(after !== undefined, (qb) =>
        qb.where((eb) => {
          const at = sql<Date>`timestamptz 'epoch' + ${after!.atMicros}::bigint * interval '1 microsecond'`;
          // A range on the index (at or before), then the ties already read left out.
          return eb.and([
            eb('s.last_seen_at', '<=', at),
            eb.or([eb('s.last_seen_at', '<', at), eb('s.id', '>', after!.id)]),
          ]);
        }),
      )
      .orderBy('s.last_seen_at', 'desc')
      .orderBy('s.id')
      .limit(page)
      .execute();
    if (candidates.length === 0) break;
    const matched = new Set(
      (
        await db
          .selectFrom('events as g')
          .select('g.session_id')
          .distinct()
          .where('g.site_id', '=', siteId)
          .where(
            'g.session_id',
            'in',
            candidates.map((c) => c.id),
          )
          .where('g.ts', '>=', since)
          .where(environmentWhere(environment, 'g.environment'))
          .where('g.type', '=', 'signal')
          .where('g.signal', 'in', [...types])
          .execute()
      ).map((r) => r.session_id),
    );
    for (const c of candidates) if (matched.has(c.id) && ids.length < limit) ids.push(c.id);
    if (candidates.length < page) break;
    const last = candidates[candidates.length - 1];
    after = { atMicros: last.at_micros, id: last.id };
  }
  if (ids.length === 0) return [];
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
  // One statement, the views read once (a materialized CTE) for the three answers: three statements each read the page
  // views of the 1,000 sessions again through events_session_idx, on three pool connections.
  const { rows } = await sql<{
    edges: { from: string; to: string; sessions: number; transitions: number }[];
    pages: { page: string; views: number; entries: number; exits: number }[];
    sessions: number;
  }>`
    with v as materialized (${views}),
    edges as (
      select prev as "from", page as "to", count(distinct session_id)::int as sessions, count(*)::int as transitions
      from v where prev is not null
      group by prev, page
      order by transitions desc, sessions desc, prev, page
      limit ${FLOW_MAX_EDGES}
    ),
    pages as (
      select page, count(*)::int as views,
             (count(*) filter (where first_rank = 1))::int as entries,
             (count(*) filter (where last_rank = 1))::int as exits
      from v
      group by page
      order by views desc, page
      limit ${FLOW_MAX_PAGES}
    )
    select
      (select coalesce(json_agg(e order by e.transitions desc, e.sessions desc, e."from", e."to"), '[]') from edges e) as edges,
      (select coalesce(json_agg(p order by p.views desc, p.page), '[]') from pages p) as pages,
      (select count(distinct session_id)::int from v) as sessions`.execute(db);
  const r = rows[0];
  return { edges: r?.edges ?? [], pages: r?.pages ?? [], sessions: r?.sessions ?? 0 };
}
