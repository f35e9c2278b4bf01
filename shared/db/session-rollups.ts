import { sql, type Kysely, type RawBuilder } from 'kysely';
import { CONFUSING_SIGNALS, DIRECT_SOURCE } from '../domain/session-summary.ts';

/**
 * Rebuilds the Explorer's session rollup (`explore_session_state` and `explore_session_buckets`, migration 0220) from
 * the raw rows: of one site, or of every site. The processor keeps both up to date batch by batch
 * (processor/store/rollups.store.ts); this set-based rebuild is the backfill of rows written before the rollup
 * existed (the migration) and of rows written around the processor (`friction demo`). Same definitions as the
 * processor's: a session is confused when one of its signals is catalogued with a weight; `signals` holds exactly
 * the signal events (type = coalesce(signal, 'unknown'), and `unknown` weighs nothing), so it answers that from its
 * 7 % of the rows instead of scanning `events`.
 */
export async function rebuildSessionRollups(db: Kysely<any>, siteId?: string): Promise<void> {
  const site = (alias: string) => (siteId === undefined ? sql`true` : sql`${sql.ref(`${alias}.site_id`)} = ${siteId}`);
  await sql`delete from explore_session_state t where ${site('t')}`.execute(db);
  // NOTE: raw SQL: an INSERT ... SELECT over a grouped join, with the session's confusion read by one hash join on the
  // distinct (site, session) pairs of weighted signals (`signals` has no session index: a probe per session would scan).
  await sql`
    insert into explore_session_state (site_id, session_id, environment, hour, source, cohort, confused, converted, bounced,
                                       page_views, dwell_ms, last_seen_at)
    select s.site_id, s.id, case when s.environment = 'staging' then 'staging' else 'production' end,
           date_bin('1 hour', s.started_at, timestamptz '2000-01-01 00:00:00+00'),
           coalesce(nullif(s.source, ''), ${DIRECT_SOURCE}), coalesce(s.app_version, ''), c.session_id is not null,
           s.conversions > 0, s.page_views < 2, s.page_views,
           (extract(epoch from (s.last_seen_at - s.started_at)) * 1000)::float8, s.last_seen_at
    from sessions s
    left join (select distinct g.site_id, g.session_id from signals g
               where ${site('g')} and g.signal_type in (${sql.join(CONFUSING_SIGNALS)})) c
      on c.site_id = s.site_id and c.session_id = s.id
    where ${site('s')}`.execute(db);
  await rebuildSessionBuckets(db, siteId);
}

/**
 * Sums the Explorer's buckets (daily and hourly) from the session states: of one site, or of every site (the
 * second half of the rebuild; `friction demo` writes the states itself and sums its buckets with this).
 */
export async function rebuildSessionBuckets(db: Kysely<any>, siteId?: string): Promise<void> {
  const site = (alias: string) => (siteId === undefined ? sql`true` : sql`${sql.ref(`${alias}.site_id`)} = ${siteId}`);
  await sql`delete from explore_session_buckets r where ${site('r')}`.execute(db);
  for (const grain of ['day', 'hour'] as const) {
    await sql`
      insert into explore_session_buckets (site_id, environment, grain, bucket, source, cohort, confused, converted, bounced,
                                           sessions, page_views, dwell_ms)
      select site_id, environment, ${grain}, ${bucketOf(grain, sql`t.hour`)} as bucket, source, cohort, confused, converted,
             bounced, count(*), sum(page_views), sum(dwell_ms)
      from explore_session_state t where ${site('t')}
      group by site_id, environment, bucket, source, cohort, confused, converted, bounced`.execute(db);
  }
}

/**
 * Rebuilds `page_viewers` (migration 0222) from the stored page views: of one site, or of every site. The backfill
 * of views stored before it existed or around the processor (`friction demo`).
 */
export async function rebuildPageViewers(db: Kysely<any>, siteId?: string): Promise<void> {
  const site = (alias: string) => (siteId === undefined ? sql`true` : sql`${sql.ref(`${alias}.site_id`)} = ${siteId}`);
  await sql`delete from page_viewers v where ${site('v')}`.execute(db);
  await sql`
    insert into page_viewers (site_id, environment, page, session_id, last_view_at)
    select e.site_id, case when e.environment = 'staging' then 'staging' else 'production' end, e.page, e.session_id, max(e.ts)
    from events e where ${site('e')} and e.type = 'page_view'
    group by 1, 2, 3, 4`.execute(db);
}

/**
 * Rebuilds `page_weighted_signals` (migration 0311) from `signals`: of one site, or of every site. Each session's last
 * weighted signal on each page of each environment. `signals` holds exactly the signal events (page, environment as
 * the engine folds it, type = coalesce(signal, 'unknown'), which weighs nothing), so it answers from 7 % of the rows.
 */
export async function rebuildPageWeightedSignals(db: Kysely<any>, siteId?: string): Promise<void> {
  const site = (alias: string) => (siteId === undefined ? sql`true` : sql`${sql.ref(`${alias}.site_id`)} = ${siteId}`);
  await sql`delete from page_weighted_signals w where ${site('w')}`.execute(db);
  await sql`
    insert into page_weighted_signals (site_id, environment, page, session_id, last_signal_at)
    select g.site_id, g.environment, g.page, g.session_id, max(g.ts) from signals g
    where ${site('g')} and g.signal_type in (${sql.join(CONFUSING_SIGNALS)})
    group by 1, 2, 3, 4`.execute(db);
}

/**
 * Rebuilds `explore_session_keys` (migrations 0280 and 0310) from the stored events: of one site, or of every site.
 * Each session's distinct pages (of any event), signal types (of its signal events that name one) and event types, as
 * the processor keeps them batch by batch.
 */
export async function rebuildSessionKeys(db: Kysely<any>, siteId?: string): Promise<void> {
  const site = (alias: string) => (siteId === undefined ? sql`true` : sql`${sql.ref(`${alias}.site_id`)} = ${siteId}`);
  await sql`delete from explore_session_keys k where ${site('k')}`.execute(db);
  await sql`
    insert into explore_session_keys (site_id, session_id, kind, key)
    select distinct e.site_id, e.session_id, 'page', e.page from events e where ${site('e')}
    union
    select distinct e.site_id, e.session_id, 'signal', e.signal from events e
    where ${site('e')} and e.type = 'signal' and e.signal is not null
    union
    select distinct e.site_id, e.session_id, 'type', e.type from events e where ${site('e')}`.execute(db);
}

/**
 * Sums `explore_page_buckets` (migration 0282) from the session states and their page keys: of one site, or of every
 * site. Each session counts once on each page it had an event on, with its whole-session sums, as the processor
 * keeps them batch by batch. Run after the states and keys it sums are rebuilt.
 */
export async function rebuildPageBuckets(db: Kysely<any>, siteId?: string): Promise<void> {
  const site = (alias: string) => (siteId === undefined ? sql`true` : sql`${sql.ref(`${alias}.site_id`)} = ${siteId}`);
  await sql`delete from explore_page_buckets r where ${site('r')}`.execute(db);
  for (const grain of ['day', 'hour'] as const) {
    await sql`
      insert into explore_page_buckets (site_id, environment, grain, bucket, page, confused, converted, sessions,
                                        page_views, bounced, dwell_ms)
      select t.site_id, t.environment, ${grain}, ${bucketOf(grain, sql`t.hour`)} as bucket, k.key, t.confused, t.converted,
             count(*), sum(t.page_views), count(*) filter (where t.bounced), sum(t.dwell_ms)
      from explore_session_state t
      join explore_session_keys k on k.site_id = t.site_id and k.session_id = t.session_id and k.kind = 'page'
      where ${site('t')}
      group by t.site_id, t.environment, bucket, k.key, t.confused, t.converted`.execute(db);
  }
}

/** The UTC day or hour a session's start hour falls in, as the rollup's `bucket`. */
export const bucketOf = (grain: 'day' | 'hour', hour: RawBuilder<unknown>) =>
  grain === 'hour' ? hour : sql`date_bin('1 day', ${hour}, timestamptz '2000-01-01 00:00:00+00')`;

/**
 * Takes sessions out of the rollups (the Explorer's, its session keys and page buckets, the pages' viewers and weighted
 * signals) before they are deleted (privacy erasure by id, or retention
 * by last activity), so the rollup keeps answering what the remaining raw rows answer.
 */
export async function forgetSessionRollups(
  db: Kysely<any>,
  siteId: string,
  which: { ids: readonly string[] } | { lastSeenBefore: Date },
): Promise<void> {
  const where =
    'ids' in which
      ? sql`t.site_id = ${siteId} and t.session_id = any(${[...which.ids]}::text[])`
      : sql`t.site_id = ${siteId} and t.last_seen_at < ${which.lastSeenBefore}`;
  // NOTE: raw SQL: the page buckets lose what the gone sessions add on each of their pages, read before their states
  // and keys are deleted below.
  await sql`
    with gone as (
      select t.*, k.key as page from explore_session_state t
      join explore_session_keys k on k.site_id = t.site_id and k.session_id = t.session_id and k.kind = 'page'
      where ${where}
    ),
    sums as (
      select site_id, environment, g.grain,
             case when g.grain = 'hour' then hour else date_bin('1 day', hour, timestamptz '2000-01-01 00:00:00+00') end as bucket,
             page, confused, converted, count(*)::int as sessions, sum(page_views)::int as page_views,
             (count(*) filter (where bounced))::int as bounced, sum(dwell_ms) as dwell_ms
      from gone cross join (values ('day'), ('hour')) as g(grain)
      group by site_id, environment, g.grain, bucket, page, confused, converted
    )
    update explore_page_buckets h set
      sessions = h.sessions - sums.sessions, page_views = h.page_views - sums.page_views, bounced = h.bounced - sums.bounced,
      dwell_ms = h.dwell_ms - sums.dwell_ms
    from sums
    where h.site_id = sums.site_id and h.environment = sums.environment and h.grain = sums.grain and h.bucket = sums.bucket
      and h.page = sums.page and h.confused = sums.confused and h.converted = sums.converted`.execute(db);
  await sql`delete from explore_session_keys k where ${
    'ids' in which
      ? sql`k.site_id = ${siteId} and k.session_id = any(${[...which.ids]}::text[])`
      : sql`k.site_id = ${siteId} and k.session_id in (select s.id from sessions s where s.site_id = ${siteId} and s.last_seen_at < ${which.lastSeenBefore})`
  }`.execute(db);
  await sql`delete from page_viewers v where ${
    'ids' in which
      ? sql`v.site_id = ${siteId} and v.session_id = any(${[...which.ids]}::text[])`
      : sql`v.site_id = ${siteId} and v.last_view_at < ${which.lastSeenBefore}`
  }`.execute(db);
  // Retention deleted the signals before the cutoff: a row whose last one is before it has none left.
  await sql`delete from page_weighted_signals w where ${
    'ids' in which
      ? sql`w.site_id = ${siteId} and w.session_id = any(${[...which.ids]}::text[])`
      : sql`w.site_id = ${siteId} and w.last_signal_at < ${which.lastSeenBefore}`
  }`.execute(db);
  // NOTE: raw SQL: one statement deletes the states and subtracts their sums from their hours (a data-modifying CTE).
  await sql`
    with gone as (delete from explore_session_state t where ${where} returning t.*),
    sums as (
      select site_id, environment, g.grain,
             case when g.grain = 'hour' then hour else date_bin('1 day', hour, timestamptz '2000-01-01 00:00:00+00') end as bucket,
             source, cohort, confused, converted, bounced,
             count(*)::int as sessions, sum(page_views)::int as page_views, sum(dwell_ms) as dwell_ms
      from gone cross join (values ('day'), ('hour')) as g(grain)
      group by site_id, environment, g.grain, bucket, source, cohort, confused, converted, bounced
    )
    update explore_session_buckets h set
      sessions = h.sessions - sums.sessions, page_views = h.page_views - sums.page_views, dwell_ms = h.dwell_ms - sums.dwell_ms
    from sums
    where h.site_id = sums.site_id and h.environment = sums.environment and h.grain = sums.grain and h.bucket = sums.bucket
      and h.source = sums.source and h.cohort = sums.cohort and h.confused = sums.confused and h.converted = sums.converted
      and h.bounced = sums.bounced`.execute(db);
}
