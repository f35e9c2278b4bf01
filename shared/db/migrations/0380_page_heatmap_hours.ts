import { sql, type Kysely } from 'kysely';
import { rebuildPageHeatmapHours } from '../page-heatmap-hours.ts';

/**
 * The page heatmap samples every k-th signal of the page's last 30 days (k from their total): it numbered every one of
 * them per request (15,194 at 10M demo events, 12.6 ms of backend CPU). `page_heatmap_hours` counts, per site,
 * environment, page, UTC hour and device, the page's signals with viewport coordinates, kept by the processor with the
 * signals (shared/db/page-heatmap-hours.ts): the total is a sum of at most 721 hours, and each pick is found by a
 * descent into its hour and a walk of at most that hour's signals. The key includes the count, so the page's hours are
 * an index-only scan (a heap fetch per hour row otherwise: 1,211 blocks for the bench's `/` at 10M). Where `signals` is a TimescaleDB hypertable with a
 * retention policy (the embedded database), this table is one with the same chunks and policy, so its hours go when
 * theirs go.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table page_heatmap_hours (
      site_id uuid not null, environment text not null, page text not null, hour timestamptz not null,
      device text not null, signals integer not null,
      constraint page_heatmap_hours_by_page_key primary key (site_id, environment, page, hour, device) include (signals)
    )`.execute(db);
  const { rows } = await sql<{
    ok: boolean;
  }>`select exists (select 1 from pg_extension where extname = 'timescaledb') as ok`.execute(db);
  if (rows[0]?.ok) {
    await sql`select create_hypertable('page_heatmap_hours', 'hour', chunk_time_interval => interval '1 day')`.execute(
      db,
    );
    await sql`select add_retention_policy('page_heatmap_hours', interval '90 days')`.execute(db);
  }
  await sql`select set_config('statement_timeout', '0', true)`.execute(db);
  await rebuildPageHeatmapHours(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists page_heatmap_hours`.execute(db);
}
