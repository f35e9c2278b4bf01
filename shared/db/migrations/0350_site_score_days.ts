import { sql, type Kysely } from 'kysely';
import { refreshSiteScoreDays, storedScoreDays } from '../site-score-days.ts';

/**
 * The site's daily score (its pages' daily scores weighted by their sessions) was summed from `score_history` on every
 * read: the scores route's 7-day baseline (14,000 rows at 10M demo events) and the trends route's site line (60,000
 * for 30 days). `site_score_days` keeps those two sums per site, environment and day (the processor recomputes the
 * days it writes in the same transaction, shared/db/site-score-days.ts), so the readers read one row per day. Where
 * `score_history` is a TimescaleDB hypertable with a retention policy, this table is one with the same chunks and
 * policy, so its days go when theirs go.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table site_score_days (
      site_id uuid not null, environment text not null, day date not null,
      weighted_sum float8 not null, sessions bigint not null,
      constraint site_score_days_pkey primary key (site_id, environment, day)
    )`.execute(db);
  // Migration 0001 made `score_history` a hypertable wherever the extension is (the embedded PGlite), and only there.
  const { rows } = await sql<{
    ok: boolean;
  }>`select exists (select 1 from pg_extension where extname = 'timescaledb') as ok`.execute(db);
  if (rows[0]?.ok) {
    await sql`select create_hypertable('site_score_days', 'day', chunk_time_interval => interval '30 days')`.execute(
      db,
    );
    await sql`select add_retention_policy('site_score_days', interval '730 days')`.execute(db);
  }
  await refreshSiteScoreDays(db, await storedScoreDays(db));
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists site_score_days`.execute(db);
}
