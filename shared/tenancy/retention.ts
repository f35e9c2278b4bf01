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
 * 0001, 0350, 0380, 0410). The embedded database is PostgreSQL in single-user mode inside PGlite: it starts no
 * background worker, so TimescaleDB's job scheduler never runs there, and without this its policies never dropped a
 * chunk (an embedded install kept every event past the 90 days docs/privacy.md promises). Returns the jobs run.
 */
export async function runRetentionPolicies(db: Kysely<Database>): Promise<number> {
  const { rows } = await sql<{ job_id: number }>`
    select job_id from timescaledb_information.jobs where proc_name = 'policy_retention' order by job_id`.execute(db);
  for (const { job_id } of rows) await sql`call run_job(${sql.lit(Number(job_id))})`.execute(db);
  return rows.length;
}
