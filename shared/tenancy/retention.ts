import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { forgetSessionRollups } from '../db/session-rollups.ts';
import { deleteSignals } from '../db/page-heatmap-hours.ts';
import { deleteJourneySteps } from '../db/journey-steps.ts';

/**
 * Bounds of a site's retention, the same for every plan: at most the instance's 90 days (the TimescaleDB retention
 * of events and signals), at least 31, so a calendar month's sessions stay countable toward the plan's monthly quota.
 */
export const MIN_RETENTION_DAYS = 31;
export const MAX_RETENTION_DAYS = 90;

/**
 * Deletes, for each of these sites with a retention of its own, its events, signals and sessions older than it.
 * Older than the processor's windows (24 h, 7 days), so no in-memory state changes. Returns rows deleted.
 */
export async function applySiteRetention(db: Kysely<Database>, siteIds: readonly string[], now: Date): Promise<number> {
  if (siteIds.length === 0) return 0;
  const sites = await db
    .selectFrom('sites')
    .select(['id', 'retention_days'])
    .where('id', 'in', [...siteIds])
    .where('retention_days', 'is not', null)
    .execute();
  let n = 0;
  for (const s of sites) {
    const cutoff = new Date(now.getTime() - s.retention_days! * 86_400_000);
    n += Number(
      (await db.deleteFrom('events').where('site_id', '=', s.id).where('ts', '<', cutoff).executeTakeFirst())
        .numDeletedRows,
    );
    n += await deleteSignals(db, s.id, { before: cutoff });
    await deleteJourneySteps(db, s.id, { before: cutoff });
    await forgetSessionRollups(db, s.id, { lastSeenBefore: cutoff });
    n += Number(
      (await sql`delete from sessions where site_id = ${s.id} and last_seen_at < ${cutoff}`.execute(db))
        .numAffectedRows ?? 0n,
    );
  }
  return n;
}

/**
 * Runs TimescaleDB's retention policies now (raw rows 90 days, hourly scores 90, daily history two years: migrations
 * 0001, 0350, 0380, 0410), then deletes the rows past each policy from the chunks it could not drop. The embedded
 * database is PostgreSQL in single-user mode inside PGlite: it starts no background worker, so TimescaleDB's job
 * scheduler never runs there, and without this its policies never dropped a chunk (an embedded install kept every
 * event past the 90 days docs/privacy.md promises). A policy drops only whole chunks, and the embedded raw tables'
 * chunks span 30 days (migration 0450): without the delete a row would outlive its policy by up to a month. The
 * delete reads one chunk a table (the policy dropped every older one) through the time index TimescaleDB gives each.
 * Returns the jobs run.
 */
export async function runRetentionPolicies(db: Kysely<Database>): Promise<number> {
  const { rows } = await sql<{ job_id: number; table_name: string; time_column: string; drop_after: string }>`
    select j.job_id, j.hypertable_name as table_name, d.column_name as time_column, j.config->>'drop_after' as drop_after
    from timescaledb_information.jobs j
    join timescaledb_information.dimensions d
      on d.hypertable_schema = j.hypertable_schema and d.hypertable_name = j.hypertable_name and d.dimension_number = 1
    where j.proc_name = 'policy_retention'
    order by j.job_id`.execute(db);
  for (const job of rows) {
    await sql`call run_job(${sql.lit(Number(job.job_id))})`.execute(db);
    await sql`delete from ${sql.table(job.table_name)}
      where ${sql.ref(job.time_column)} < now() - ${job.drop_after}::interval`.execute(db);
  }
  return rows.length;
}
