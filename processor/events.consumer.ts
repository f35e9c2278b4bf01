import { sql, type Kysely, type Transaction } from 'kysely';
import { EventBatchMessageSchema, type EventBatchMessage } from '../shared/contracts/ingest.ts';
import type { Database } from '../shared/db/database.ts';
import { runBatchLoop, type Delivered } from '../shared/bus/batch-loop.ts';
import type { BusConsumer } from '../shared/bus/bus.ts';
import type { Logger } from '../shared/logger.ts';
import { insertDeadLetter } from './store/dead-letters.store.ts';
import { storeEvents, type StoredEvent } from './store/events.store.ts';
import type { RunBulkTransaction } from '../shared/db/bulk.ts';
import { sessionDeltas, upsertSessions } from './store/sessions.store.ts';
import type { TickGate } from './tick-gate.ts';

/**
 * Derives state from newly stored events inside the batch transaction (scores, clusters). It must not change
 * memory before the commit: it returns what to apply once the transaction committed.
 */
export interface FreshEventsSink {
  write(trx: Transaction<Database>, fresh: readonly StoredEvent[]): Promise<() => void>;
}

export interface EventsConsumerOptions {
  db: Kysely<Database>;
  bulk: RunBulkTransaction;
  consumer: BusConsumer;
  stream: string;
  sink: FreshEventsSink;
  batchMessages: number;
  fetchExpiresMs: number;
  signal: AbortSignal;
  log: Logger;
  onPause?: (paused: boolean) => void;
  /** Batches hold it shared; the tick holds it alone (see TickGate). */
  gate?: TickGate;
  onBatch?: (stats: { messages: number; events: number; fresh: number; seconds: number }) => void;
  /** Called after a dead letter is stored (metrics). */
  onDeadLetter?: () => void;
}

/** Stores one transaction per fetched batch: events, signals, sessions, and whatever the sink derives. */
export async function storeBatch(bulk: RunBulkTransaction, sink: FreshEventsSink, batches: readonly EventBatchMessage[]): Promise<StoredEvent[]> {
  const { fresh, apply } = await bulk(async (tx) => {
    const { trx } = tx;
    const fresh = await storeEvents(tx, batches);
    if (fresh.length === 0) return { fresh, apply: undefined };
    await upsertSessions(trx, sessionDeltas(fresh, batches));
    return { fresh, apply: await sink.write(trx, fresh) };
  });
  apply?.();
  return fresh;
}

/** Runs the pull loop of one partition until `signal` aborts. */
export function runEventsConsumer(o: EventsConsumerOptions): Promise<void> {
  return runBatchLoop({
    consumer: o.consumer,
    schema: EventBatchMessageSchema,
    batchMessages: o.batchMessages,
    fetchExpiresMs: o.fetchExpiresMs,
    probe: async () => {
      await sql`select 1`.execute(o.db);
      return true;
    },
    onPause: o.onPause,
    signal: o.signal,
    log: o.log,
    handle: async (items: readonly Delivered<EventBatchMessage>[]) => {
      const t0 = performance.now();
      const batches = items.map((i) => i.value);
      const store = () => storeBatch(o.bulk, o.sink, batches);
      const fresh = o.gate ? await o.gate.shared(store) : await store();
      o.onBatch?.({ messages: items.length, events: batches.reduce((n, b) => n + b.events.length, 0), fresh: fresh.length, seconds: (performance.now() - t0) / 1000 });
    },
    deadLetter: (msg, reason) => insertDeadLetter(o.db, o.stream, msg, reason).then(() => o.onDeadLetter?.()),
  });
}
