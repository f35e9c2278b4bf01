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
 * with their page views and their signals of `types` (signal confidence from the event's `meta.confidence`, when the
 * SDK sent it).
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
  // newest first, a page at a time (journeys_recent_sessions_idx); each page's page views and signals in the window
  // are read in one statement (events' (site, session, ts) index; `signals` has no session index) that keeps the
  // sessions with a signal of `types` among them. One EXISTS per session in a single statement was planned as a
  // semi-join over every session of the window (the planner cannot tell how many have such a signal): 4.5 s at 1M demo
  // events for 102,793 probes, where the first 1,000 matches were among the newest. A probe of the page's events
  // for the matches and a second read of the matches' events read the same index entries and heap rows twice.
  const bySession = new Map<string, PathEvent[]>();
  // Where the next page starts: the last session's activity in microseconds (exact, where a Date would round).
  let after: { atMicros: string; id: string } | undefined;
  // Most sessions with a signal have one of the edge decorators (981 of the 1,000 newest at 10M demo events): the
  // first page is the limit, a later one what is still missing at the last page's rate of matches (and a fifth more),
  // twice the last page when it matched none.
  for (let page = Math.max(limit, 100); bySession.size < limit; ) {
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
    const found = await pathEvents(
      db,
      siteId,
      environment,
      candidates.map((c) => c.id),
      types,
      since,
    );
    // In the candidates' order (most recently active first), up to the limit.
    for (const c of candidates) {
      const list = found.get(c.id);
      if (list && bySession.size < limit) bySession.set(c.id, list);
    }
    if (candidates.length < page) break;
    const last = candidates[candidates.length - 1];
    after = { atMicros: last.at_micros, id: last.id };
    const missing = limit - bySession.size;
    page = Math.min(
      20_000,
      found.size === 0 ? page * 2 : Math.max(100, Math.ceil(((missing * candidates.length) / found.size) * 1.2)),
    );
  }
  return [...bySession].map(([id, events]) => ({ id, events }));
}

/**
 * The page views and signals of `types` in the window of those of `ids` that had such a signal in it, each session's
 * oldest first: the events read once (a materialized CTE), the sessions with a matching signal kept from them.
 * Signals of other types are left out: the edges weigh only the qualifying ones (journeyFrictionEdges).
 */
async function pathEvents(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  ids: readonly string[],
  types: readonly string[],
  since: Date,
): Promise<Map<string, PathEvent[]>> {
  // NOTE: one row per session, its events as one JSON array of arrays (type, page, epoch ms, signal, selector,
  // confidence) that JSON.parse reads natively: the driver parsing 16k rows of seven fields (a string and a Date per
  // field and row) for 1,000 sessions was most of the route's CPU in the API process. The time is truncated to the
  // millisecond as the driver's Date was.
  const { rows } = await sql<{
    session_id: string;
    events: [string, string, number, string | null, string | null, number | null][];
  }>`
    with ev as materialized (
      select session_id, type, page, ts, signal, selector,
             case when jsonb_typeof(meta->'confidence') = 'number' then (meta->>'confidence')::float8 end as confidence
      from events
      where site_id = ${siteId} and session_id = any(${[...ids]}::text[]) and ${environmentWhere(environment)}
        and (type = 'page_view' or (type = 'signal' and signal = any(${[...types]}::text[]))) and ts >= ${since}
    )
    select session_id,
           json_agg(json_build_array(type, page, floor(extract(epoch from ts) * 1000)::float8, signal, selector, confidence)
                    order by ts) as events
    from ev
    where session_id in (select session_id from ev where type = 'signal')
    group by session_id`.execute(db);
  return new Map(
    rows.map((r) => [
      r.session_id,
      r.events.map(([type, page, ts, signal, selector, confidence]) => ({
        type: type as PathEvent['type'],
        page,
        ts,
        signal: signal ?? undefined,
        selector,
        confidence: confidence ?? undefined,
      })),
    ]),
  );
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
