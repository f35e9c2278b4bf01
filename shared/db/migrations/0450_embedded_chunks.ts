import { sql, type Kysely } from 'kysely';

/**
 * The hypertables of raw rows on the embedded database (PGlite with TimescaleDB) take 30-day chunks instead of the
 * server's one-day ones. PGlite keeps few relation files open, so a query over many small chunks reopens each of
 * their files every time: on a 100-day table a 90-day count took 24 ms with one-day chunks and 4 ms with 30-day
 * ones, the latest ten rows 18 ms and 0.9 ms; the four test files that fill the embedded database with weeks of
 * data (rollups, journeys-rollup, demo-data, explore-embedded) took 74 core-seconds instead of 118. A server keeps
 * one-day chunks: at millions of events a day they keep the recent ones in memory and let compression (not run on
 * the embedded database) take whole days. Retention stays exact: on the embedded database the processor runs the
 * policies itself, and `runRetentionPolicies` (shared/tenancy/retention.ts) deletes the rows past a policy from the
 * chunks it cannot drop yet. Only chunks made from now on take the new size.
 */
const tables = ['events', 'signals', 'journey_steps', 'page_heatmap_hours'];

/** Whether this is the embedded database: PGlite's version() names the compiler of its WebAssembly build (emcc). */
async function embeddedTimescale(db: Kysely<any>): Promise<boolean> {
  const { rows } = await sql<{ embedded: boolean }>`
    select exists (select 1 from pg_extension where extname = 'timescaledb') and version() like '%emcc%' as embedded`.execute(
    db,
  );
  return rows[0]?.embedded === true;
}

async function setChunkInterval(db: Kysely<any>, interval: string): Promise<void> {
  if (!(await embeddedTimescale(db))) return;
  for (const table of tables)
    await sql`select set_chunk_time_interval(${table}::regclass, ${interval}::interval)`.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  await setChunkInterval(db, '30 days');
}

export async function down(db: Kysely<any>): Promise<void> {
  await setChunkInterval(db, '1 day');
}
