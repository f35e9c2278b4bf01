import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { environmentWhere } from '../../../shared/db/environment.ts';
import type { SiteScope } from '../../../shared/db/scope.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import { signalWeight } from '../../../shared/domain/signal-catalog.ts';
import {
  MAX_EDGE_EXAMPLES,
  MAX_JOURNEY_EDGES,
  type JourneyEdge,
  type JourneyExample,
  type PathEvent,
} from './journey-edges.ts';
import { presentJourneys } from './journeys.presenter.ts';
import { JOURNEY_WINDOW_DAYS, recentSignalSessions } from './journeys.queries.ts';
import { EDGE_DECORATORS, type JourneyQuery } from './journeys.schema.ts';

// The journeys route before journey_steps (migration 0410), for tests and the comparison of answers only: the
// sessions and their events read from `events`, and the edges built from one object per event. The route's answer
// from the steps must equal this one.

const DAY_MS = 86_400_000;

/**
 * The route's answer from the raw events. `ordered`: equal times within a session in a fixed order (page, then the
 * signal's type, selector and confidence: the steps' order), where the read leaves them in its sort's order.
 */
export async function journeyFrictionFromEvents(db: Kysely<Database>, q: JourneyQuery, at: Date, ordered = false) {
  const types = q.signal_type ? [q.signal_type] : EDGE_DECORATORS;
  let sessions = await journeySessionsFromEvents(db, q, types, q.limit, at);
  if (ordered) sessions = sessions.map((s) => ({ id: s.id, events: [...s.events].sort(byStep) }));
  const qualifying = new Set(types);
  const edges = journeyFrictionEdgesByEvents(
    sessions,
    (t) => (qualifying.has(t) ? signalWeight(t) : undefined),
    q.min_friction_weight,
  );
  return presentJourneys(q.site_id, q, sessions.length, edges);
}

const text = (a: string | null | undefined, b: string | null | undefined) =>
  a === b ? 0 : a == null ? -1 : b == null ? 1 : a < b ? -1 : 1;
const num = (a: number | undefined, b: number | undefined) =>
  a === b ? 0 : a === undefined ? -1 : b === undefined ? 1 : a < b ? -1 : a > b ? 1 : 0;
const byStep = (a: PathEvent, b: PathEvent) =>
  a.ts - b.ts ||
  text(a.page, b.page) ||
  text(a.signal, b.signal) ||
  text(a.selector, b.selector) ||
  num(a.confidence, b.confidence);

/**
 * The `limit` most recently active sessions of the last JOURNEY_WINDOW_DAYS with at least one signal of `types`,
 * with their page views and their signals of `types` (signal confidence from the event's `meta.confidence`, when the
 * SDK sent it).
 */
export async function journeySessionsFromEvents(
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
    const candidates = await recentSignalSessions(db, siteId, environment, since, after, page)
      .select(sql<string>`(extract(epoch from s.last_seen_at) * 1000000)::bigint::text`.as('at_micros'))
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

/** The edge builder before the columnar one: one object per event (journey-edges.ts has the rules). */
/** One edge's sums; its sets only once a signal crosses it. */
type Acc = { from: string; to: string; weight: number } & Partial<{
  sessions: Set<string>;
  signals: Map<string, number>;
  examples: JourneyExample[];
}>;

/**
 * Builds the edges of `sessions` (most recent first: examples come from the first sessions given).
 * `weightOf` is the catalog weight of a qualifying signal type and undefined for any other type.
 */
export function journeyFrictionEdgesByEvents(
  sessions: readonly { id: string; events: readonly PathEvent[] }[],
  weightOf: (signalType: string) => number | undefined,
  minFrictionWeight: number,
): JourneyEdge[] {
  const edges = new Map<string, Acc>();
  for (const s of sessions) {
    const events = [...s.events].sort((a, b) => a.ts - b.ts);
    const views = events.filter((e) => e.type === 'page_view');
    if (views.length < 2) continue;
    const byView: PathEvent[][] = views.map(() => []);
    for (const e of events) {
      if (e.type !== 'signal' || e.signal === undefined || weightOf(e.signal) === undefined) continue;
      const i = viewOf(views, e);
      if (i >= 0) byView[i].push(e);
    }
    for (let i = 0; i + 1 < views.length; i++) {
      const from = views[i].page;
      const to = views[i + 1].page;
      const key = `${from}\u0000${to}`;
      let acc = edges.get(key);
      if (!acc) edges.set(key, (acc = { from, to, weight: 0 }));
      if (byView[i].length + byView[i + 1].length === 0) continue;
      (acc.sessions ??= new Set()).add(s.id);
      const signals = (acc.signals ??= new Map());
      const examples = (acc.examples ??= []);
      for (const sig of [...byView[i], ...byView[i + 1]]) {
        const type = sig.signal!;
        acc.weight += weightOf(type)! * clamp01(sig.confidence ?? 1);
        signals.set(type, (signals.get(type) ?? 0) + 1);
        if (examples.length < MAX_EDGE_EXAMPLES) {
          examples.push({
            session_id: s.id,
            page: sig.page,
            signal_type: type,
            element_selector: sig.selector ?? null,
            occurred_at: new Date(sig.ts).toISOString(),
          });
        }
      }
    }
  }
  // Most edges carry no signal (8,500 edges of 1,000 demo sessions at 1M events): the 100 kept are chosen on the
  // accumulators, and only they are presented.
  return [...edges.values()]
    .map((acc) => ({ acc, friction_weight: Math.round(acc.weight * 10) / 10 }))
    .filter((e) => e.friction_weight >= minFrictionWeight)
    .sort(
      (a, b) =>
        b.friction_weight - a.friction_weight ||
        (b.acc.sessions?.size ?? 0) - (a.acc.sessions?.size ?? 0) ||
        a.acc.from.localeCompare(b.acc.from) ||
        a.acc.to.localeCompare(b.acc.to),
    )
    .slice(0, MAX_JOURNEY_EDGES)
    .map(({ acc: a, friction_weight }) => ({
      from: a.from,
      to: a.to,
      sessions: a.sessions?.size ?? 0,
      friction_weight,
      signals: Object.fromEntries([...(a.signals ?? [])].sort(([x], [y]) => x.localeCompare(y))),
      examples: a.examples ?? [],
    }));
}

const clamp01 = (v: number): number => (Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 1);

/** Index of the view a signal belongs to, or -1 when the session never viewed the signal's page. */
function viewOf(views: readonly PathEvent[], sig: PathEvent): number {
  let first = -1;
  let latest = -1;
  for (let i = 0; i < views.length; i++) {
    if (views[i].page !== sig.page) continue;
    if (first < 0) first = i;
    if (views[i].ts <= sig.ts) latest = i;
  }
  return latest >= 0 ? latest : first;
}
