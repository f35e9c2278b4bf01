import { sql, type Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { jsonbRows } from '../../shared/db/sql.ts';
import { CONFUSING_SIGNALS } from '../../shared/domain/session-summary.ts';
import { environmentOf } from '../../shared/domain/deploy-verification.ts';
import type { StoredEvent } from './events.store.ts';

/**
 * The Explorer's session rollup, kept in the batch transaction that stored the events (migration 0220).
 *
 * A session spans batches, and a later batch can change every part of its rollup key (an earlier event moves its
 * start hour, a signal makes it confused, a conversion converts it, a second page view ends its bounce) and its sums
 * (page views, dwell). So `explore_session_state` remembers what each session adds to `explore_session_buckets` now,
 * and every batch moves the contribution of the sessions it touched: subtract the remembered one, add the one read
 * back from `sessions` after the batch's upsert.
 *
 * Exactly once: only the events this transaction stored for the first time (`fresh`) get here, as for `sessions`;
 * a redelivered batch stores none and moves nothing. A session's upsert holds its row lock until commit, so two
 * batches of one session queue and the second reads the first's state.
 */

const CONFUSING = new Set(CONFUSING_SIGNALS);

interface Contribution {
  siteId: string;
  environment: string;
  /** Start of the UTC hour, and of the UTC day, the session started in (as the database prints them). */
  hour: string;
  day: string;
  source: string;
  cohort: string;
  confused: boolean;
  converted: boolean;
  bounced: boolean;
  pageViews: number;
  dwellMs: number;
}

interface TouchedSession {
  site_id: string;
  session_id: string;
  environment: string;
  hour: string;
  day: string;
  source: string;
  cohort: string;
  converted: boolean;
  bounced: boolean;
  page_views: number;
  dwell_ms: number;
  last_seen_at: string;
  /** The remembered contribution (null: the session is new to the rollup). */
  old_environment: string | null;
  old_hour: string | null;
  old_day: string | null;
  old_source: string | null;
  old_cohort: string | null;
  old_confused: boolean | null;
  old_converted: boolean | null;
  old_bounced: boolean | null;
  old_page_views: number | null;
  old_dwell_ms: number | null;
  /** The pages the session had events on before this batch (its page keys, not yet extended by the batch). */
  old_pages: string[];
}

interface BucketDelta {
  key: [
    siteId: string,
    environment: string,
    grain: 'day' | 'hour',
    bucket: string,
    source: string,
    cohort: string,
    confused: boolean,
    converted: boolean,
    bounced: boolean,
  ];
  sessions: number;
  pageViews: number;
  dwellMs: number;
}

/** A contribution's key leads, once by day and once by hour: its site, environment, grain and bucket. */
const grainKeys = (c: Contribution) =>
  (['day', 'hour'] as const).map(
    (grain) => [c.siteId, c.environment, grain, grain === 'day' ? c.day : c.hour] as const,
  );

/** The delta kept under `key` (its fields joined), starting from `zero` the first time. */
function deltaAt<D extends { key: readonly unknown[] }>(
  deltas: Map<string, D>,
  key: D['key'],
  zero: Omit<D, 'key'>,
): D {
  const k = key.join('\u0000');
  let d = deltas.get(k);
  if (!d) deltas.set(k, (d = { ...zero, key } as D));
  return d;
}

/** Adds (sign 1) or subtracts (sign -1) one session's contribution to its day's and its hour's deltas (pure). */
function fold(deltas: Map<string, BucketDelta>, c: Contribution, sign: 1 | -1): void {
  for (const at of grainKeys(c)) {
    const key: BucketDelta['key'] = [...at, c.source, c.cohort, c.confused, c.converted, c.bounced];
    const d = deltaAt(deltas, key, { sessions: 0, pageViews: 0, dwellMs: 0 });
    d.sessions += sign;
    d.pageViews += sign * c.pageViews;
    d.dwellMs += sign * c.dwellMs;
  }
}

interface PageDelta {
  key: [
    siteId: string,
    environment: string,
    grain: 'day' | 'hour',
    bucket: string,
    page: string,
    confused: boolean,
    converted: boolean,
  ];
  sessions: number;
  pageViews: number;
  bounced: number;
  dwellMs: number;
}

/** Adds (sign 1) or subtracts (sign -1) one session's contribution on each of its pages, by day and by hour (pure). */
function foldPages(deltas: Map<string, PageDelta>, c: Contribution, pages: Iterable<string>, sign: 1 | -1): void {
  for (const page of pages) {
    for (const at of grainKeys(c)) {
      const key: PageDelta['key'] = [...at, page, c.confused, c.converted];
      const d = deltaAt(deltas, key, { sessions: 0, pageViews: 0, bounced: 0, dwellMs: 0 });
      d.sessions += sign;
      d.pageViews += sign * c.pageViews;
      d.bounced += sign * (c.bounced ? 1 : 0);
      d.dwellMs += sign * c.dwellMs;
    }
  }
}

/**
 * The rollups of the events this batch transaction stored for the first time, after `upsertSessions` in the same
 * transaction: the Explorer's session rollup and session keys, and the pages' viewers and weighted signals.
 */
export async function writeRollups(trx: Transaction<Database>, fresh: readonly StoredEvent[]): Promise<void> {
  await rollUpSessions(trx, fresh);
  await rollUpSessionKeys(trx, fresh);
  await rollUpLastOnPage(trx, fresh, 'page_viewers', (e) => e.type === 'page_view');
  await rollUpLastOnPage(
    trx,
    fresh,
    'page_weighted_signals',
    (e) => e.type === 'signal' && e.signal !== undefined && CONFUSING.has(e.signal),
  );
}

/** Moves the contribution of every session these fresh events touched. */
async function rollUpSessions(trx: Transaction<Database>, fresh: readonly StoredEvent[]): Promise<void> {
  if (fresh.length === 0) return;
  const touched = new Map<string, { siteId: string; sessionId: string; confusedNow: boolean; pages: Set<string> }>();
  for (const e of fresh) {
    const k = `${e.siteId}:${e.sessionId}`;
    let t = touched.get(k);
    if (!t) touched.set(k, (t = { siteId: e.siteId, sessionId: e.sessionId, confusedNow: false, pages: new Set() }));
    t.pages.add(e.page);
    if (e.type === 'signal' && e.signal !== undefined && CONFUSING.has(e.signal)) t.confusedNow = true;
  }
  const list = [...touched.values()];
  // NOTE: raw SQL: the sessions as the batch's upsert left them joined with their remembered contribution, keyed by
  // two parallel arrays; the hour and dwell are computed by the database exactly as the backfill computes them.
  const { rows } = await sql<TouchedSession>`
    select s.site_id, s.id as session_id,
           case when s.environment = 'staging' then 'staging' else 'production' end as environment,
           date_bin('1 hour', s.started_at, timestamptz '2000-01-01 00:00:00+00')::text as hour,
           date_bin('1 day', s.started_at, timestamptz '2000-01-01 00:00:00+00')::text as day,
           coalesce(nullif(s.source, ''), '(direct)') as source, coalesce(s.app_version, '') as cohort,
           s.conversions > 0 as converted, s.page_views < 2 as bounced, s.page_views,
           (extract(epoch from (s.last_seen_at - s.started_at)) * 1000)::float8 as dwell_ms, s.last_seen_at::text as last_seen_at,
           t.environment as old_environment, t.hour::text as old_hour,
           date_bin('1 day', t.hour, timestamptz '2000-01-01 00:00:00+00')::text as old_day, t.source as old_source, t.cohort as old_cohort,
           t.confused as old_confused, t.converted as old_converted, t.bounced as old_bounced,
           t.page_views as old_page_views, t.dwell_ms as old_dwell_ms,
           array(select p.key from explore_session_keys p
                 where p.site_id = k.site_id and p.session_id = k.id and p.kind = 'page') as old_pages
    from unnest(${list.map((t) => t.siteId)}::uuid[], ${list.map((t) => t.sessionId)}::text[]) as k(site_id, id)
    join sessions s on s.site_id = k.site_id and s.id = k.id
    left join explore_session_state t on t.site_id = k.site_id and t.session_id = k.id`.execute(trx);

  const deltas = new Map<string, BucketDelta>();
  // The page buckets (migration 0282): the remembered contribution leaves the session's pages before this batch (its
  // keys, extended only after this), the new one joins them and the batch's pages.
  const pageDeltas = new Map<string, PageDelta>();
  const states: unknown[][] = [];
  for (const r of rows) {
    const t = touched.get(`${r.site_id}:${r.session_id}`);
    const next: Contribution = {
      siteId: r.site_id,
      environment: r.environment,
      hour: r.hour,
      day: r.day,
      source: r.source,
      cohort: r.cohort,
      confused: r.old_confused === true || t?.confusedNow === true,
      converted: r.converted,
      bounced: r.bounced,
      pageViews: r.page_views,
      dwellMs: r.dwell_ms,
    };
    if (r.old_hour !== null) {
      const old: Contribution = {
        siteId: r.site_id,
        environment: r.old_environment!,
        hour: r.old_hour,
        day: r.old_day!,
        source: r.old_source!,
        cohort: r.old_cohort!,
        confused: r.old_confused!,
        converted: r.old_converted!,
        bounced: r.old_bounced!,
        pageViews: r.old_page_views!,
        dwellMs: r.old_dwell_ms!,
      };
      fold(deltas, old, -1);
      foldPages(pageDeltas, old, r.old_pages, -1);
    }
    fold(deltas, next, 1);
    foldPages(pageDeltas, next, new Set([...r.old_pages, ...(t?.pages ?? [])]), 1);
    states.push([
      r.site_id,
      r.session_id,
      next.environment,
      next.hour,
      next.source,
      next.cohort,
      next.confused,
      next.converted,
      next.bounced,
      next.pageViews,
      next.dwellMs,
      r.last_seen_at,
    ]);
  }
  const moved = [...deltas.values()].filter((d) => d.sessions !== 0 || d.pageViews !== 0 || d.dwellMs !== 0);
  if (moved.length > 0) {
    // Every batch of a site adds to the same current day and hour: rows are written in key order, so two transactions lock
    // them in one order and queue instead of deadlocking. Rows whose sessions reach 0 stay (reads skip them).
    await sql`
      insert into explore_session_buckets as h (site_id, environment, grain, bucket, source, cohort, confused, converted,
                                                bounced, sessions, page_views, dwell_ms)
      select (r->>0)::uuid, r->>1, r->>2, (r->>3)::timestamptz, r->>4, r->>5, (r->>6)::boolean, (r->>7)::boolean,
             (r->>8)::boolean, (r->>9)::int, (r->>10)::int, (r->>11)::float8
      from ${jsonbRows(moved.map((d) => [...d.key, d.sessions, d.pageViews, d.dwellMs]))}
      order by r->>0, r->>1, r->>2, r->>3, r->>4, r->>5, r->>6, r->>7, r->>8
      on conflict (site_id, environment, grain, bucket, source, cohort, confused, converted, bounced) do update set
        sessions = h.sessions + excluded.sessions,
        page_views = h.page_views + excluded.page_views,
        dwell_ms = h.dwell_ms + excluded.dwell_ms`.execute(trx);
  }
  const pageMoved = [...pageDeltas.values()].filter(
    (d) => d.sessions !== 0 || d.pageViews !== 0 || d.bounced !== 0 || d.dwellMs !== 0,
  );
  if (pageMoved.length > 0) {
    // In key order, as the buckets above.
    await sql`
      insert into explore_page_buckets as h (site_id, environment, grain, bucket, page, confused, converted, sessions,
                                             page_views, bounced, dwell_ms)
      select (r->>0)::uuid, r->>1, r->>2, (r->>3)::timestamptz, r->>4, (r->>5)::boolean, (r->>6)::boolean, (r->>7)::int,
             (r->>8)::int, (r->>9)::int, (r->>10)::float8
      from ${jsonbRows(pageMoved.map((d) => [...d.key, d.sessions, d.pageViews, d.bounced, d.dwellMs]))}
      order by r->>0, r->>1, r->>2, r->>3, r->>4, r->>5, r->>6
      on conflict (site_id, environment, grain, bucket, page, confused, converted) do update set
        sessions = h.sessions + excluded.sessions,
        page_views = h.page_views + excluded.page_views,
        bounced = h.bounced + excluded.bounced,
        dwell_ms = h.dwell_ms + excluded.dwell_ms`.execute(trx);
  }
  await sql`
    insert into explore_session_state as t (site_id, session_id, environment, hour, source, cohort, confused, converted,
                                            bounced, page_views, dwell_ms, last_seen_at)
    select (r->>0)::uuid, r->>1, r->>2, (r->>3)::timestamptz, r->>4, r->>5, (r->>6)::boolean, (r->>7)::boolean,
           (r->>8)::boolean, (r->>9)::int, (r->>10)::float8, (r->>11)::timestamptz
    from ${jsonbRows(states)}
    on conflict (site_id, session_id) do update set
      environment = excluded.environment, hour = excluded.hour, source = excluded.source, cohort = excluded.cohort,
      confused = excluded.confused, converted = excluded.converted, bounced = excluded.bounced,
      page_views = excluded.page_views, dwell_ms = excluded.dwell_ms, last_seen_at = excluded.last_seen_at`.execute(
    trx,
  );
}

/**
 * Each session's distinct pages, signal types and event types (`explore_session_keys`, migrations 0280 and 0310), from
 * the events this transaction stored for the first time: a key already kept stays as it is (a set: nothing to count or
 * move).
 */
async function rollUpSessionKeys(trx: Transaction<Database>, fresh: readonly StoredEvent[]): Promise<void> {
  const keys = new Map<string, [siteId: string, sessionId: string, kind: 'page' | 'signal' | 'type', key: string]>();
  const add = (siteId: string, sessionId: string, kind: 'page' | 'signal' | 'type', key: string) => {
    const k = `${siteId}\u0000${sessionId}\u0000${kind}\u0000${key}`;
    if (!keys.has(k)) keys.set(k, [siteId, sessionId, kind, key]);
  };
  for (const e of fresh) {
    add(e.siteId, e.sessionId, 'page', e.page);
    add(e.siteId, e.sessionId, 'type', e.type);
    // As events.signal stores it: a signal event without a type names none.
    if (e.type === 'signal' && e.signal != null) add(e.siteId, e.sessionId, 'signal', e.signal);
  }
  if (keys.size === 0) return;
  // Rows in key order, as above: DO NOTHING locks no key already kept; two transactions adding one new key queue on it.
  await sql`
    insert into explore_session_keys (site_id, session_id, kind, key)
    select (r->>0)::uuid, r->>1, r->>2, r->>3
    from ${jsonbRows([...keys.values()])}
    order by r->>0, r->>1, r->>2, r->>3
    on conflict (site_id, session_id, kind, key) do nothing`.execute(trx);
}

/**
 * Each session's last view of each page (`page_viewers`, migration 0222) and last weighted signal on each page
 * (`page_weighted_signals`, migration 0311), from the events this transaction stored for the first time: a redelivered
 * event is not fresh, and one older than the time kept changes nothing.
 */
async function rollUpLastOnPage(
  trx: Transaction<Database>,
  fresh: readonly StoredEvent[],
  table: 'page_viewers' | 'page_weighted_signals',
  keep: (e: StoredEvent) => boolean,
): Promise<void> {
  const last = new Map<string, [siteId: string, environment: string, page: string, sessionId: string, ts: number]>();
  for (const e of fresh) {
    if (!keep(e)) continue;
    const environment = environmentOf(e.environment);
    const k = `${e.siteId}\u0000${environment}\u0000${e.page}\u0000${e.sessionId}`;
    const seen = last.get(k);
    if (!seen) last.set(k, [e.siteId, environment, e.page, e.sessionId, e.ts]);
    else if (e.ts > seen[4]) seen[4] = e.ts;
  }
  if (last.size === 0) return;
  const at = sql.ref(table === 'page_viewers' ? 'last_view_at' : 'last_signal_at');
  // Rows in key order: batches of one page's sessions lock them in one order (see the session rollup above).
  await sql`
    insert into ${sql.table(table)} as v (site_id, environment, page, session_id, ${at})
    select (r->>0)::uuid, r->>1, r->>2, r->>3, to_timestamp((r->>4)::float8 / 1000)
    from ${jsonbRows([...last.values()])}
    order by r->>0, r->>1, r->>2, r->>3
    on conflict (site_id, environment, page, session_id) do update set
      ${at} = greatest(v.${at}, excluded.${at})`.execute(trx);
}
