import type { Kysely } from 'kysely';
import type { Database } from '../shared/db/database.ts';
import type { RunBulkTransaction } from '../shared/db/bulk.ts';
import type { Bus } from '../shared/bus/bus.ts';
import type { Topology } from '../shared/contracts/subjects.ts';
import { ensurePartitionConsumer, ensureStreams } from '../shared/bus/topology.ts';
import type { Logger } from '../shared/logger.ts';
import { runEventsConsumer, type FreshEventsSink } from './events.consumer.ts';
import {
  counter,
  deadLetters,
  outboxBacklog,
  processorBatchDuration,
  processorLag,
  processorLagSeconds,
} from '../shared/http/metrics.ts';
import type { TickGate } from './tick-gate.ts';
import { recordPartitionHealth } from './store/partition-health.ts';

const processed = counter(
  'friction_processor_events_total',
  'Events consumed by the processor, by outcome (stored = new, duplicate = already stored)',
  ['outcome'],
);

/** A lag reading this recent serves the next gauge too. */
const LAG_READING_MS = 200;

export interface ProcessorOptions {
  db: Kysely<Database>;
  bulk: RunBulkTransaction;
  bus: Bus;
  topology: Topology;
  partitions: readonly number[];
  sink: FreshEventsSink;
  batchMessages: number;
  fetchExpiresMs: number;
  batchWindowMs?: number;
  ackWaitMs: number;
  log: Logger;
  gate?: TickGate;
}

export interface RunningProcessor {
  /** Stops fetching, lets in-flight batches commit and ack, then resolves. */
  stop(): Promise<void>;
  /** Runs the periodic work now (evictions, nightly triage when due); tests call it after moving the clock. */
  tick?: () => Promise<void>;
  /** Rejects if a partition loop dies (the process should then exit and be restarted). */
  done: Promise<void>;
}

/**
 * Consumes one partition until `signal` aborts: ensures its durable consumer, then runs its pull loop with `bulk`
 * (a fenced one when the partition is leased). Resolves once the loop runs, with its promise wrapped: returning the
 * loop promise itself would make the caller wait for the loop to end.
 */
export async function consumePartition(
  o: ProcessorOptions,
  p: number,
  signal: AbortSignal,
  bulk: RunBulkTransaction = o.bulk,
): Promise<{ loop: Promise<void> }> {
  const consumer = await ensurePartitionConsumer(o.bus, o.topology, p, {
    batchMessages: o.batchMessages,
    ackWaitMs: o.ackWaitMs,
  });
  const loop = runEventsConsumer({
    db: o.db,
    bulk,
    consumer,
    stream: o.topology.eventsStream,
    sink: o.sink,
    batchMessages: o.batchMessages,
    fetchExpiresMs: o.fetchExpiresMs,
    batchWindowMs: o.batchWindowMs,
    signal,
    gate: o.gate,
    log: o.log.child({ partition: p }),
    onBatch: ({ events, fresh, seconds }) => {
      processed.inc({ outcome: 'stored' }, fresh);
      processed.inc({ outcome: 'duplicate' }, events - fresh);
      processorBatchDuration.observe(seconds);
    },
    onDeadLetter: () => deadLetters.inc(),
    onHealth: recordPartitionHealth(o.db, o.log, consumer.name),
  });
  // One read of the consumer's lag serves both gauges of a scrape (they are collected together).
  let reading: { at: number; lag: ReturnType<Bus['consumerLag']> } | undefined;
  const lag = () => {
    const now = performance.now();
    if (!reading || now - reading.at > LAG_READING_MS)
      reading = { at: now, lag: o.bus.consumerLag(o.topology.eventsStream, consumer.name) };
    return reading.lag;
  };
  const labels = { partition: String(p) };
  const unlisten = processorLag.add(async () => {
    const l = await lag();
    return l ? [{ labels, value: l.messages }] : [];
  });
  const unlistenSeconds = processorLagSeconds.add(async () => {
    const l = await lag();
    return l ? [{ labels, value: (l.oldestAgeMs ?? 0) / 1000 }] : [];
  });
  const stopListening = () => {
    unlisten();
    unlistenSeconds();
  };
  void loop.then(stopListening, stopListening);
  return { loop };
}

/** Reports the outbox rows not yet relayed on /metrics; returns the function that stops it. */
export function watchOutbox(db: Kysely<Database>): () => void {
  return outboxBacklog.add(async () => {
    const row = await db
      .selectFrom('outbox')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('published_at', 'is', null)
      .executeTakeFirstOrThrow();
    return [{ labels: {}, value: Number(row.n) }];
  });
}

/** Starts one pull loop per owned partition (a static PROCESSOR_PARTITIONS set). All state of a site lives in its partition's loop. */
export async function startProcessor(o: ProcessorOptions): Promise<RunningProcessor> {
  await ensureStreams(o.bus, o.topology);
  const abort = new AbortController();
  const loops = await Promise.all(o.partitions.map((p) => consumePartition(o, p, abort.signal)));
  const unlistenOutbox = watchOutbox(o.db);
  o.log.info({ partitions: o.partitions }, 'processor consuming');
  const done = Promise.all(loops.map((l) => l.loop)).then(() => undefined);
  void done.finally(unlistenOutbox).catch(() => {});
  return {
    done,
    stop: async () => {
      abort.abort();
      await done;
    },
  };
}
