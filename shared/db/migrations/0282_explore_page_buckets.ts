import { sql, type Kysely } from 'kysely';
import { rebuildPageBuckets } from '../session-rollups.ts';

/**
 * The Explorer's measures grouped by page read one row per (session, page) of the window from `explore_session_keys`:
 * at 10M demo events the average dwell by page over 30 days joined 7.4M of them with the sessions and grouped them
 * (55 s, past the statement timeout: 503). `explore_page_buckets` sums, per site, environment, UTC day or hour a
 * session started, page it had an event on, and the session's confused and converted flags, what those sessions add
 * to a measure (sessions, page views, bounces, dwell): the whole days and hours of a window read a few thousand rows.
 * Exact: a session counts once on each page of its keys with its whole-session sums, which is what the raw group
 * means. The processor keeps it in the batch transaction (processor/store/rollups.store.ts); the backfill sums the
 * session states and keys.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table explore_page_buckets (
      site_id uuid not null,
      environment text not null,
      grain text not null check (grain in ('day', 'hour')),
      bucket timestamptz not null,
      page text not null,
      confused boolean not null,
      converted boolean not null,
      sessions integer not null,
      page_views integer not null,
      bounced integer not null,
      dwell_ms double precision not null,
      constraint explore_page_buckets_pkey primary key (site_id, environment, grain, bucket, page, confused, converted)
    )`.execute(db);
  // The backfill joins every session state with its pages, longer than the pool's per-statement timeout at 10M
  // events; lifted for this migration's transaction only.
  await sql`select set_config('statement_timeout', '0', true)`.execute(db);
  await rebuildPageBuckets(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists explore_page_buckets`.execute(db);
}
