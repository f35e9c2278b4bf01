import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { EventBatchMessage } from '../../shared/contracts/ingest.ts';
import { partitionOf } from '../../shared/contracts/subjects.ts';
import type { Database } from '../../shared/db/database.ts';
import { pgBulkTransactions } from '../../shared/db/bulk.ts';
import { storeEvents } from '../../processor/store/events.store.ts';
import { databaseCpuBetween, databaseCpuSeconds } from './harness.ts';
import { PROCESSOR_BATCH_MESSAGES_DEFAULT } from '../../shared/config.ts';

/** A floor's rate and its CPU per event: the bench process's own (`client`) and PostgreSQL's (`database`), in µs. */
export interface FloorFigure {
  rate: number;
  cpuUsPerEvent: { client: number; database: number };
}

/**
 * The floor for the processor's storage: the same rows through the processor's own COPY path (`storeEvents`) into
 * the same tables, with the processor's parallelism (one writer per partition, one transaction per fetch of
 * `fetchSize` batches, the processor's default fetch unless given), without the engine, sessions or scores. The tables are emptied afterwards so the processor
 * then stores the same rows from scratch. Returns events/s.
 */
/** The COPY floor's rate with the CPU it took per event, which moves far less than its rate with what else the machine runs. */
export async function measuredCopyFloor(
  db: Kysely<Database>,
  dbUrl: string,
  messages: readonly EventBatchMessage[],
  partitions = 4,
  fetchSize = PROCESSOR_BATCH_MESSAGES_DEFAULT,
): Promise<FloorFigure> {
  const perPartition = Array.from({ length: partitions }, () => [] as EventBatchMessage[]);
  for (const m of messages) perPartition[partitionOf(m.site_id, partitions)]!.push(m);
  const events = messages.reduce((n, m) => n + m.events.length, 0);
  const pool = new pg.Pool({ connectionString: dbUrl, max: partitions });
  const bulk = pgBulkTransactions(pool);
  const dbCpu0 = await databaseCpuSeconds(db);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let dbCpu = 0;
  let seconds = 0;
  let cpu = { user: 0, system: 0 };
  try {
    await Promise.all(
      perPartition.map(async (list) => {
        for (let i = 0; i < list.length; i += fetchSize)
          await bulk((tx) => storeEvents(tx, list.slice(i, i + fetchSize)));
      }),
    );
    seconds = (performance.now() - t0) / 1000;
    cpu = process.cpuUsage(cpu0);
    // Read while the pool's backends are still connected.
    dbCpu = databaseCpuBetween(dbCpu0, await databaseCpuSeconds(db));
  } finally {
    await pool.end();
  }
  await sql`truncate events, signals`.execute(db);
  return {
    rate: events / seconds,
    cpuUsPerEvent: { client: (cpu.user + cpu.system) / events, database: (dbCpu * 1e6) / events },
  };
}
