import { sql, type Kysely } from 'kysely';
import { rebuildJourneySteps } from '../journey-steps.ts';

/**
 * The journeys route (api/routes/journeys) read the page views and qualifying signals of its `limit` sessions from
 * `events` on every request (16k heap rows through events_session_idx for 1,000 sessions at 10M demo events, 141-194
 * ms of PostgreSQL CPU). `journey_steps` keeps each session's page views and edge-decorator signals as arrays, appended
 * by the processor in the batch transaction (one row per session and batch, never rewritten: shared/db/journey-steps.ts),
 * so a session is a row or a few. Times are epoch microseconds, as stored in `events`. Where `events` is a TimescaleDB
 * hypertable with a retention policy (the embedded database), this table is one on its rows' last step, with the same
 * policy: a row goes only once every step of it is older than the policy's 90 days.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table journey_steps (
      site_id uuid not null, environment text not null, session_id text not null,
      first_at timestamptz not null, last_at timestamptz not null,
      view_at bigint[] not null, view_page text[] not null,
      signal_at bigint[] not null, signal_page text[] not null, signal_type text[] not null,
      signal_selector text[] not null, signal_confidence float8[] not null
    )`.execute(db);
  await sql`create index journey_steps_session_idx on journey_steps (site_id, session_id)`.execute(db);
  await sql`create index journey_steps_retention_idx on journey_steps (site_id, first_at)`.execute(db);
  const { rows } = await sql<{
    ok: boolean;
  }>`select exists (select 1 from pg_extension where extname = 'timescaledb') as ok`.execute(db);
  if (rows[0]?.ok) {
    await sql`select create_hypertable('journey_steps', 'last_at', chunk_time_interval => interval '1 day')`.execute(
      db,
    );
    await sql`select add_retention_policy('journey_steps', interval '90 days')`.execute(db);
  }
  await sql`select set_config('statement_timeout', '0', true)`.execute(db);
  await rebuildJourneySteps(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists journey_steps`.execute(db);
}
