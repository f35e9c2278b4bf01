import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { EventBatchMessage } from '../../shared/contracts/ingest.ts';
import { partitionOf } from '../../shared/contracts/subjects.ts';
import type { Database } from '../../shared/db/database.ts';
import { pgBulkTransactions } from '../../shared/db/bulk.ts';
import { storeEvents } from '../../processor/store/events.store.ts';

/**
 * The floor for the processor's storage: the same rows through the processor's own COPY path (`storeEvents`) into
 * the same tables, with the processor's parallelism (one writer per partition, one transaction per fetch of
 * `fetchSize` batches), without the engine, sessions or scores. The tables are emptied afterwards so the processor
 * then stores the same rows from scratch. Returns events/s.
 */
export async function copyFloor(db: Kysely<Database>, dbUrl: string, messages: readonly EventBatchMessage[], partitions = 4, fetchSize = 1000): Promise<number> {
  const perPartition = Array.from({ length: partitions }, () => [] as EventBatchMessage[]);
  for (const m of messages) perPartition[partitionOf(m.site_id, partitions)]!.push(m);
  const events = messages.reduce((n, m) => n + m.events.length, 0);
  const pool = new pg.Pool({ connectionString: dbUrl, max: partitions });
  const bulk = pgBulkTransactions(pool);
  const t0 = performance.now();
  try {
    await Promise.all(
      perPartition.map(async (list) => {
        for (let i = 0; i < list.length; i += fetchSize) await bulk((tx) => storeEvents(tx, list.slice(i, i + fetchSize)));
      }),
    );
  } finally {
    await pool.end();
  }
  const rate = events / ((performance.now() - t0) / 1000);
  await sql`truncate events, signals`.execute(db);
  return rate;
}
