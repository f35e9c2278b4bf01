import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { environmentWhere } from '../../../shared/db/environment.ts';
import type { SiteScope } from '../../../shared/db/scope.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import type { JourneySession } from './journey-edges.ts';
import { JOURNEY_SIGNAL_TYPES } from '../../../shared/db/journey-steps.ts';

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
 * The `limit` most recently active sessions of the last JOURNEY_WINDOW_DAYS with at least one signal of `types` in
 * the window, with their page views and their signals of `types` in the window (`journey_steps`, migration 0410; signal
 * confidence from the event's `meta.confidence`, when the SDK sent it). `types` must be journey edge decorators (the
 * only signals the steps keep).
 */
export async function journeySessions(
  db: Kysely<Database>,
  { site_id: siteId, environment }: SiteScope,
  types: readonly string[],
  limit: number,
  now: Date,
): Promise<JourneySession[]> {
  for (const t of types)
    if (!JOURNEY_SIGNAL_TYPES.includes(t)) throw new Error(`journeys: ${t} is not a journey edge decorator`);
  const since = new Date(now.getTime() - JOURNEY_WINDOW_DAYS * DAY_MS);
  const sinceMicros = since.getTime() * 1000;
  // The most recently active sessions that stored a signal (`signal_count > 0`: necessary for a signal of `types`),
  // newest first, a page at a time (journeys_recent_sessions_idx); each page's steps in one statement that sends the
  // steps of only the sessions with a signal of `types` in the window. One EXISTS per session in a single statement was
  // planned as a semi-join over every session of the window (the planner cannot tell how many have such a signal):
  // 4.5 s at 1M demo events for 102,793 probes, where the first 1,000 matches were among the newest.
  const sessions: JourneySession[] = [];
  // Where the next page starts: the last session's activity in microseconds (exact, where a Date would round).
  let after: { atMicros: string; id: string } | undefined;
  // Most sessions with a signal have one of the edge decorators (981 of the 1,000 newest at 10M demo events): the
  // first page is the limit, a later one what is still missing at the last page's rate of matches (and a fifth more),
  // twice the last page when it matched none.
  for (let page = Math.max(limit, 100); sessions.length < limit; ) {
    const candidates = recentSignalSessions(db, siteId, environment, since, after, page);
    // NOTE: raw SQL: a lateral aggregate of each candidate's step rows (journey_steps_session_idx), whose arrays go as
    // one JSON value per session (JSON.parse reads it natively), only where one of its signals of `types` is in the
    // window (a row wholly in the window needs only the overlap of its types).
    const { rows } = await sql<{ id: string; at_micros: string; steps: StepRow[] | null }>`
      with c as (${candidates})
      select c.id, (extract(epoch from c.last_seen_at) * 1000000)::bigint::text as at_micros,
             case when p.qualifies then p.steps end as steps
      from c
      left join lateral (
        select json_agg(json_build_array(j.view_at, j.view_page, j.signal_at, j.signal_page, j.signal_type,
                                         j.signal_selector, j.signal_confidence)) as steps,
               bool_or(j.signal_type && ${[...types]}::text[]
                       and (j.first_at >= ${since}
                            or exists (select 1 from unnest(j.signal_type, j.signal_at) u(t, at)
                                       where u.t = any(${[...types]}::text[]) and u.at >= ${sinceMicros}))) as qualifies
        from journey_steps j
        where j.site_id = ${siteId} and j.session_id = c.id and j.environment = ${environment} and j.last_at >= ${since}
      ) p on true
      order by c.last_seen_at desc, c.id`.execute(db);
    if (rows.length === 0) break;
    let found = 0;
    // In the candidates' order (most recently active first), up to the limit.
    for (const r of rows) {
      if (r.steps === null) continue;
      found++;
      if (sessions.length < limit) sessions.push(sessionOfSteps(r.id, r.steps, types, sinceMicros));
    }
    if (rows.length < page) break;
    const last = rows[rows.length - 1];
    after = { atMicros: last.at_micros, id: last.id };
    const missing = limit - sessions.length;
    page = Math.min(20_000, found === 0 ? page * 2 : Math.max(100, Math.ceil(((missing * rows.length) / found) * 1.2)));
  }
  return sessions;
}

/**
 * A page of the most recently active sessions of the window that stored a signal, newest first, from `after` on (the
 * last session of the page before: its activity in microseconds and id); journeys_recent_sessions_idx.
 */
export function recentSignalSessions(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  since: Date,
  after: { atMicros: string; id: string } | undefined,
  page: number,
) {
  return db
    .selectFrom('sessions as s')
    .select(['s.id', 's.last_seen_at'])
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
    .limit(page);
}

/** One `journey_steps` row as the read sends it: its arrays, times in epoch microseconds. */
type StepRow = [
  viewAt: number[],
  viewPage: string[],
  signalAt: number[],
  signalPage: string[],
  signalType: string[],
  signalSelector: (string | null)[],
  signalConfidence: (number | null)[],
];

/** Code-unit order of two strings (-1, 0, 1), null first: the order of steps at the same microsecond. */
const cmp = (a: string | null, b: string | null): number =>
  a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1;

/** Numeric order of two numbers, null first. */
const cmpNumber = (a: number | null, b: number | null): number =>
  a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : a > b ? 1 : 0;

/**
 * A session's steps in the window, in time order (equal microseconds by page, then by the signal's type, selector and
 * confidence: a fixed order, where the read of `events` left equal times in the order its sort gave), times cut to
 * the millisecond as the route answers them. Only the signals of `types`.
 */
function sessionOfSteps(id: string, rows: StepRow[], types: readonly string[], sinceMicros: number): JourneySession {
  const vAt: number[] = [];
  const vPage: string[] = [];
  const sAt: number[] = [];
  const sRow: number[] = [];
  const sIdx: number[] = [];
  for (let r = 0; r < rows.length; r++) {
    const [viewAt, viewPage, signalAt, , signalType] = rows[r];
    for (let k = 0; k < viewAt.length; k++) {
      if (viewAt[k] < sinceMicros) continue;
      vAt.push(viewAt[k]);
      vPage.push(viewPage[k]);
    }
    for (let k = 0; k < signalAt.length; k++) {
      if (signalAt[k] < sinceMicros || !types.includes(signalType[k])) continue;
      sAt.push(signalAt[k]);
      sRow.push(r);
      sIdx.push(k);
    }
  }
  const views = vAt.map((_, i) => i).sort((a, b) => vAt[a] - vAt[b] || cmp(vPage[a], vPage[b]));
  const field = <T>(i: number, f: 3 | 4 | 5 | 6) => rows[sRow[i]][f][sIdx[i]] as T;
  const signals = sAt
    .map((_, i) => i)
    .sort(
      (a, b) =>
        sAt[a] - sAt[b] ||
        cmp(field(a, 3), field(b, 3)) ||
        cmp(field(a, 4), field(b, 4)) ||
        cmp(field(a, 5), field(b, 5)) ||
        cmpNumber(field(a, 6), field(b, 6)),
    );
  return {
    id,
    viewMs: views.map((i) => Math.floor(vAt[i] / 1000)),
    viewPage: views.map((i) => vPage[i]),
    signalMs: signals.map((i) => Math.floor(sAt[i] / 1000)),
    signalPage: signals.map((i) => field<string>(i, 3)),
    signalType: signals.map((i) => field<string>(i, 4)),
    signalSelector: signals.map((i) => field<string | null>(i, 5)),
    signalConfidence: signals.map((i) => field<number | null>(i, 6)),
  };
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
