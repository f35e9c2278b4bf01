import { sql, type Kysely, type Transaction } from 'kysely';
import { EventBatchMessageSchema, type EventBatchMessage } from '../shared/contracts/ingest.ts';
import type { Database } from '../shared/db/database.ts';
import { runBatchLoop, type Delivered, type PartitionHealth } from '../shared/bus/batch-loop.ts';
import type { BusConsumer } from '../shared/bus/bus.ts';
import type { Logger } from '../shared/logger.ts';
import { insertDeadLetter } from './store/dead-letters.store.ts';
import { storeEvents, type StoredEvent } from './store/events.store.ts';
import type { RunBulkTransaction } from '../shared/db/bulk.ts';
import { sessionDeltas, upsertSessions } from './store/sessions.store.ts';
import { writeRollups } from './store/rollups.store.ts';
import type { TickGate } from './tick-gate.ts';

/**
 * Derives state from newly stored events inside the batch transaction (scores, clusters). It must not change
 * memory before the commit: it returns what to apply once the transaction committed.
 */
export interface FreshEventsSink {
  stage(trx: Transaction<Database>, fresh: readonly StoredEvent[]): Promise<() => void>;
}

export interface EventsConsumerOptions {
  db: Kysely<Database>;
  bulk: RunBulkTransaction;
  consumer: BusConsumer;
  stream: string;
  sink: FreshEventsSink;
  batchMessages: number;
  fetchExpiresMs: number;
  /** PROCESSOR_BATCH_WINDOW_MS: what arrives within this long of a batch's first message shares its transaction. */
  batchWindowMs?: number;
  signal: AbortSignal;
  log: Logger;
  onPause?: (paused: boolean) => void;
  /** Batches hold it shared; the tick holds it alone (see TickGate). */
  gate?: TickGate;
  onBatch?: (stats: { messages: number; events: number; fresh: number; seconds: number }) => void;
  /** Called after a dead letter is stored (metrics). */
  onDeadLetter?: () => void;
  /** Pauses that are no message's fault (schema, permissions, the poison circuit breaker), and their end. */
  onHealth?: (h: PartitionHealth) => void;
}

/** How many in-doubt events a partition remembers (a bound for batches that failed and never came back). */
const IN_DOUBT_MAX = 200_000;

const eventKey = (siteId: string, id: string, ts: number) => `${siteId}|${id}|${ts}`;

/**
 * Events that a failed batch transaction had stored as new when it failed. A failure can hide a commit that
 * succeeded (the server committed and its reply was lost): the events are then in the database but were never
 * folded into memory, and when the batch comes back they are no longer new. Each stays here until a batch
 * transaction that saw it again commits: if the database already holds it, that lost commit stored it, and this
 * batch folds it into memory; if it comes back new, it was rolled back and is stored and folded as usual.
 * NOTE: keyed by event, never by "already stored": an event that was new in a committed and applied transaction
 * never enters this set, so a batch folded before its ack was lost is not folded a second time when it returns.
 */
export class InDoubtEvents {
  private readonly byKey = new Map<string, StoredEvent>();
  private readonly max: number;

  constructor(max = IN_DOUBT_MAX) {
    this.max = max;
  }

  get size(): number {
    return this.byKey.size;
  }

  /**
   * The transaction that stored these as new failed: its commit may or may not have happened. They are kept whole,
   * however many (a fetch of PROCESSOR_BATCH_MESSAGES × 500 events is more than the bound): only older events are
   * let go to stay within it, oldest first (a batch that failed and was dead-lettered never comes back to settle).
   */
  remember(events: readonly StoredEvent[]): void {
    for (const e of events) {
      const k = eventKey(e.siteId, e.id, e.ts);
      this.byKey.delete(k); // re-inserted: the newest failure's events are the last to go
      this.byKey.set(k, e);
    }
    let excess = this.byKey.size - Math.max(this.max, events.length);
    for (const k of this.byKey.keys()) {
      if (excess-- <= 0) break;
      this.byKey.delete(k);
    }
  }

  /** The in-doubt events of these batches that the database already holds (not in `fresh`): a lost commit stored them. */
  committedUnfolded(batches: readonly EventBatchMessage[], fresh: readonly StoredEvent[]): StoredEvent[] {
    if (this.byKey.size === 0) return [];
    const isFresh = new Set(fresh.map((e) => eventKey(e.siteId, e.id, e.ts)));
    const out = new Map<string, StoredEvent>();
    for (const b of batches) {
      for (const ev of b.events) {
        const k = eventKey(b.site_id, ev.id, ev.ts);
        const e = this.byKey.get(k);
        if (e && !isFresh.has(k)) out.set(k, e);
      }
    }
    return [...out.values()];
  }

  /** A transaction that saw these committed: they are settled (stored and folded). */
  settle(events: readonly StoredEvent[]): void {
    if (this.byKey.size === 0) return;
    for (const e of events) this.byKey.delete(eventKey(e.siteId, e.id, e.ts));
  }
}

/**
 * Stores one transaction per fetched batch: events, signals, sessions, and whatever the sink derives from the new
 * events and from the events a lost commit stored without folding them (see InDoubtEvents).
 */
export async function storeBatch(
  bulk: RunBulkTransaction,
  sink: FreshEventsSink,
  batches: readonly EventBatchMessage[],
  doubts: InDoubtEvents,
): Promise<StoredEvent[]> {
  let attempted: StoredEvent[] = [];
  let result: { fresh: StoredEvent[]; unfolded: StoredEvent[]; apply: (() => void) | undefined };
  try {
    result = await bulk(async (tx) => {
      const { trx } = tx;
      const fresh = await storeEvents(tx, batches);
      attempted = fresh;
      // Sessions count each stored event once, in the transaction that stored it: the unfolded events only fold.
      const unfolded = doubts.committedUnfolded(batches, fresh);
      if (fresh.length === 0 && unfolded.length === 0) return { fresh, unfolded, apply: undefined };
      if (fresh.length > 0) await upsertSessions(trx, sessionDeltas(fresh, batches));
      await writeRollups(trx, fresh);
      return { fresh, unfolded, apply: await sink.stage(trx, unfolded.length === 0 ? fresh : [...fresh, ...unfolded]) };
    });
  } catch (err) {
    doubts.remember(attempted);
    throw err;
  }
  result.apply?.();
  doubts.settle(result.fresh);
  doubts.settle(result.unfolded);
  return result.fresh;
}

/** Runs the pull loop of one partition until `signal` aborts. */
export function runEventsConsumer(o: EventsConsumerOptions): Promise<void> {
  const doubts = new InDoubtEvents();
  return runBatchLoop({
    consumer: o.consumer,
    schema: EventBatchMessageSchema,
    batchMessages: o.batchMessages,
    fetchExpiresMs: o.fetchExpiresMs,
    batchWindowMs: o.batchWindowMs,
    probe: async () => {
      await sql`select 1`.execute(o.db);
      return true;
    },
    onPause: o.onPause,
    onHealth: o.onHealth,
    signal: o.signal,
    log: o.log,
    handle: async (items: readonly Delivered<EventBatchMessage>[]) => {
      const t0 = performance.now();
      const batches = items.map((i) => i.value);
      const store = () => storeBatch(o.bulk, o.sink, batches, doubts);
      const fresh = o.gate ? await o.gate.shared(store) : await store();
      o.onBatch?.({
        messages: items.length,
        events: batches.reduce((n, b) => n + b.events.length, 0),
        fresh: fresh.length,
        seconds: (performance.now() - t0) / 1000,
      });
    },
    deadLetter: (msg, reason) => insertDeadLetter(o.db, o.stream, msg, reason).then(() => o.onDeadLetter?.()),
  });
}
