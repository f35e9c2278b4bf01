import { sql, type Kysely } from 'kysely';
import { SIGNAL_CATALOG } from '../domain/signal-catalog.ts';
import { jsonbRows } from './sql.ts';

/**
 * Signal types the journeys route weighs (catalog `journey_edge_decorator`): the only signals `journey_steps` keeps.
 */
export const JOURNEY_SIGNAL_TYPES: readonly string[] = SIGNAL_CATALOG.filter((d) => d.journey_edge_decorator).map(
  (d) => d.type,
);

/** A stored event as `journey_steps` keeps it (a page view, or a signal of JOURNEY_SIGNAL_TYPES). */
export interface JourneyStepEvent {
  siteId: string;
  sessionId: string;
  /** As the batch sent it (`events.environment`): only 'staging' is staging. */
  environment: string | null | undefined;
  type: string;
  page: string;
  /** Epoch milliseconds, as stored (the processor stores whole milliseconds). */
  ts: number;
  signal?: string | null;
  selector?: string | null;
  /** The event's `meta`: its `confidence` when it is a JSON number. */
  meta?: Record<string, unknown> | null;
}

/**
 * `events.environment` as the journeys route reads it: `environmentWhere` counts anything but 'staging' as production.
 */
const environmentOf = sql`case when e.environment = 'staging' then 'staging' else 'production' end`;
/** A stored time as epoch microseconds (bigint, exact). */
const micros = (ts: ReturnType<typeof sql.ref>) => sql`(extract(epoch from ${ts}) * 1000000)::bigint`;

/**
 * Rebuilds `journey_steps` (migration 0410) from `events`, one row per session and environment: of one site, or of
 * every site. The backfill of events stored before the table existed (the migration) or around the processor
 * (`friction demo`). The processor appends a row per session and batch instead; both hold the same steps, and the
 * route orders a session's steps itself, so the grouping and the order within a row do not matter.
 */
export async function rebuildJourneySteps(db: Kysely<any>, siteId?: string): Promise<void> {
  const site = siteId === undefined ? sql`true` : sql`e.site_id = ${siteId}`;
  await sql`delete from journey_steps e where ${site}`.execute(db);
  const view = sql`e.type = 'page_view'`;
  const signal = sql`e.type = 'signal'`;
  const order = sql`order by e.ts, e.id`;
  await sql`
    insert into journey_steps (site_id, environment, session_id, first_at, last_at, view_at, view_page, signal_at,
                               signal_page, signal_type, signal_selector, signal_confidence)
    select e.site_id, ${environmentOf}, e.session_id, min(e.ts), max(e.ts),
           coalesce(array_agg(${micros(sql.ref('e.ts'))} ${order}) filter (where ${view}), '{}'),
           coalesce(array_agg(e.page ${order}) filter (where ${view}), '{}'),
           coalesce(array_agg(${micros(sql.ref('e.ts'))} ${order}) filter (where ${signal}), '{}'),
           coalesce(array_agg(e.page ${order}) filter (where ${signal}), '{}'),
           coalesce(array_agg(e.signal ${order}) filter (where ${signal}), '{}'),
           coalesce(array_agg(e.selector ${order}) filter (where ${signal}), '{}'),
           coalesce(array_agg(case when jsonb_typeof(e.meta->'confidence') = 'number' then (e.meta->>'confidence')::float8 end ${order})
                    filter (where ${signal}), '{}')
    from events e
    where ${site} and (e.type = 'page_view' or (e.type = 'signal' and e.signal in (${sql.join([...JOURNEY_SIGNAL_TYPES])})))
    group by e.site_id, 2, e.session_id`.execute(db);
}

/** A signal's confidence as the route reads it from `meta`: the `confidence` member when it is a number. */
const confidenceOf = (meta: JourneyStepEvent['meta']): number | null => {
  const c = meta?.confidence;
  return typeof c === 'number' && Number.isFinite(c) ? c : null;
};

/**
 * Appends the journey steps of events the caller's transaction has just stored for the first time (the processor's
 * batch: a redelivered event is not fresh, so nothing is appended twice): one row per session and environment of the
 * batch, its page views and its signals of JOURNEY_SIGNAL_TYPES. An insert only: no stored row is read or rewritten,
 * so the cost is linear in the batch whatever the session's length.
 */
export async function appendJourneySteps(trx: Kysely<any>, fresh: readonly JourneyStepEvent[]): Promise<void> {
  const rows = new Map<
    string,
    {
      siteId: string;
      environment: string;
      sessionId: string;
      first: number;
      last: number;
      viewAt: number[];
      viewPage: string[];
      signalAt: number[];
      signalPage: string[];
      signalType: string[];
      signalSelector: (string | null)[];
      signalConfidence: (number | null)[];
    }
  >();
  for (const e of fresh) {
    const isView = e.type === 'page_view';
    if (!isView && !(e.type === 'signal' && e.signal != null && JOURNEY_SIGNAL_TYPES.includes(e.signal))) continue;
    const environment = e.environment === 'staging' ? 'staging' : 'production';
    const k = `${e.siteId}\u0000${environment}\u0000${e.sessionId}`;
    let r = rows.get(k);
    if (!r) {
      rows.set(
        k,
        (r = {
          siteId: e.siteId,
          environment,
          sessionId: e.sessionId,
          first: Infinity,
          last: -Infinity,
          viewAt: [],
          viewPage: [],
          signalAt: [],
          signalPage: [],
          signalType: [],
          signalSelector: [],
          signalConfidence: [],
        }),
      );
    }
    // As stored: a whole millisecond (the processor writes the ISO text of new Date(ts)).
    const ms = new Date(e.ts).getTime();
    r.first = Math.min(r.first, ms);
    r.last = Math.max(r.last, ms);
    if (isView) {
      r.viewAt.push(ms * 1000);
      r.viewPage.push(e.page);
    } else {
      r.signalAt.push(ms * 1000);
      r.signalPage.push(e.page);
      r.signalType.push(e.signal!);
      r.signalSelector.push(e.selector ?? null);
      r.signalConfidence.push(confidenceOf(e.meta));
    }
  }
  if (rows.size === 0) return;
  const doc = [...rows.values()].map((r) => [
    r.siteId,
    r.environment,
    r.sessionId,
    r.first,
    r.last,
    r.viewAt,
    r.viewPage,
    r.signalAt,
    r.signalPage,
    r.signalType,
    r.signalSelector,
    r.signalConfidence,
  ]);
  const array = (i: number, type: string) =>
    sql`array(select x::${sql.raw(type)} from jsonb_array_elements_text(r->${sql.lit(i)}) with ordinality a(x, n) order by n)`;
  // NOTE: raw SQL: positional rows in one jsonb document, each with its arrays (an append: no conflict possible).
  await sql`
    insert into journey_steps (site_id, environment, session_id, first_at, last_at, view_at, view_page, signal_at,
                               signal_page, signal_type, signal_selector, signal_confidence)
    select (r->>0)::uuid, r->>1, r->>2,
           timestamptz 'epoch' + (r->>3)::bigint * interval '1 millisecond',
           timestamptz 'epoch' + (r->>4)::bigint * interval '1 millisecond',
           ${array(5, 'bigint')}, ${array(6, 'text')}, ${array(7, 'bigint')}, ${array(8, 'text')}, ${array(9, 'text')},
           ${array(10, 'text')}, ${array(11, 'float8')}
    from ${jsonbRows(doc)}`.execute(trx);
}

/**
 * Deletes a site's journey steps of these sessions (privacy erasure) or older than a time (retention). For retention a
 * row that straddles the time keeps only its steps at or after it (its arrays filtered in one update), so no step
 * outlives its event. Returns the rows deleted.
 */
export async function deleteJourneySteps(
  db: Kysely<any>,
  siteId: string,
  which: { sessionIds: readonly string[] } | { before: Date },
): Promise<number> {
  if ('sessionIds' in which) {
    const { numAffectedRows } = await sql`
      delete from journey_steps where site_id = ${siteId} and session_id = any(${[...which.sessionIds]}::text[])`.execute(
      db,
    );
    return Number(numAffectedRows ?? 0n);
  }
  const before = which.before;
  const cut = sql`(extract(epoch from ${before}::timestamptz) * 1000000)::bigint`;
  const kept = (column: string, at: string) =>
    sql`array(select x from unnest(${sql.ref(column)}, ${sql.ref(at)}) with ordinality u(x, t, n) where t >= ${cut} order by n)`;
  // NOTE: raw SQL: each array filtered by its times, in its order (unnest of two arrays pairs them element by element).
  await sql`
    update journey_steps set
      view_page = ${kept('view_page', 'view_at')}, view_at = ${kept('view_at', 'view_at')},
      signal_page = ${kept('signal_page', 'signal_at')}, signal_type = ${kept('signal_type', 'signal_at')},
      signal_selector = ${kept('signal_selector', 'signal_at')},
      signal_confidence = ${kept('signal_confidence', 'signal_at')}, signal_at = ${kept('signal_at', 'signal_at')},
      first_at = (select min(timestamptz 'epoch' + t * interval '1 microsecond')
                  from unnest(view_at || signal_at) t where t >= ${cut})
    where site_id = ${siteId} and first_at < ${before} and last_at >= ${before}`.execute(db);
  const { numAffectedRows } = await sql`
    delete from journey_steps where site_id = ${siteId} and last_at < ${before}`.execute(db);
  return Number(numAffectedRows ?? 0n);
}
