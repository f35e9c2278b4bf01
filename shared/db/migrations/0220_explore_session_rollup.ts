import { sql, type Kysely } from 'kysely';
import { rebuildSessionRollups } from '../session-rollups.ts';

/**
 * The Explorer's session rollup (issue 25): measures over a 30-day window read daily and hourly sums instead of a
 * million sessions. `explore_session_state` holds what each session currently adds to `explore_session_buckets` (its hour,
 * source, cohort, flags, page views and dwell), so when a later batch changes the session the processor moves its
 * contribution: subtract the old, add the new, in the batch's transaction (processor/store/rollups.store.ts). The
 * backfill rebuilds both from the raw rows already stored.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table explore_session_state (
      site_id uuid not null,
      session_id text not null,
      environment text not null,
      hour timestamptz not null,
      source text not null,
      cohort text not null,
      confused boolean not null,
      converted boolean not null,
      bounced boolean not null,
      page_views integer not null,
      dwell_ms double precision not null,
      last_seen_at timestamptz not null,
      constraint explore_session_state_pkey primary key (site_id, session_id)
    )`.execute(db);
  // One row per (grain, bucket) and key: `grain` 'day' for whole UTC days, 'hour' for hours. A 30-day measure reads
  // the whole days of its window, the whole hours of its two partial days, and the raw sessions of its two partial
  // hours. The key leads with (site, environment, grain, bucket): the Explorer's measures read one range of it per grain.
  await sql`
    create table explore_session_buckets (
      site_id uuid not null,
      environment text not null,
      grain text not null,
      bucket timestamptz not null,
      source text not null,
      cohort text not null,
      confused boolean not null,
      converted boolean not null,
      bounced boolean not null,
      sessions integer not null,
      page_views integer not null,
      dwell_ms double precision not null,
      constraint explore_measure_by_bucket_key primary key (site_id, environment, grain, bucket, source, cohort, confused, converted, bounced)
    )`.execute(db);
  // The backfill reads every stored row (10M events: a minute or more on a busy machine), longer than the pool's
  // per-statement timeout; lifted for this migration's transaction only.
  await sql`select set_config('statement_timeout', '0', true)`.execute(db);
  await rebuildSessionRollups(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists explore_session_buckets`.execute(db);
  await sql`drop table if exists explore_session_state`.execute(db);
}
