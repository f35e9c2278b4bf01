import type { Topology } from '../contracts/subjects.ts';
import type { Bus, BusConsumer } from './bus.ts';

/** Streams keep messages a week: long enough to replay after any outage we would survive. */
const STREAM_MAX_AGE_MS = 7 * 24 * 3600 * 1000;
/** Client retries within this window carry the same batch id and are dropped by the stream. */
const DUPLICATE_WINDOW_MS = 10 * 60 * 1000;

/**
 * Size limits of the streams, the same for JetStream and the in-process bus. NOTIFY drops its oldest
 * messages, since the outbox rows they come from stay in the database. EVENTS has no count or size limit (JetStream
 * keeps acked messages until max age, so a count limit would end up refusing all traffic; its disk is sized by the
 * operator) and refuses rather than discards at a limit: the in-process bus, which holds only unconsumed messages,
 * caps them by its memory budget, and ingest then answers 503 so the SDK retries. Nothing accepted is discarded.
 */
export const STREAM_LIMITS = {
  events: { maxMsgs: -1, maxBytes: -1, discard: 'new' },
  notify: { maxMsgs: 1_000_000, maxBytes: 256 * 1024 ** 2, discard: 'old' },
} as const;

/**
 * Creates the EVENTS and NOTIFY streams (idempotent; limits of existing streams are brought up to date), and removes
 * the COMMANDS stream of earlier versions, which nothing reads any more.
 */
export async function ensureStreams(bus: Bus, t: Topology): Promise<void> {
  const common = { duplicateWindowMs: DUPLICATE_WINDOW_MS, maxAgeMs: STREAM_MAX_AGE_MS };
  await bus.ensureStream({ name: t.notifyStream, subjects: [t.allNotifyFilter], ...common, ...STREAM_LIMITS.notify });
  await bus.ensureStream({ name: t.eventsStream, subjects: [t.allEventsFilter], ...common, ...STREAM_LIMITS.events });
  await bus.deleteStream(t.retiredCommandsStream); // absent (a new install): nothing to do
}

/** The durable pull consumer of one event partition. */
export function ensurePartitionConsumer(
  bus: Bus,
  t: Topology,
  partition: number,
  opts: { batchMessages: number; ackWaitMs: number },
): Promise<BusConsumer> {
  return bus.ensureConsumer({
    stream: t.eventsStream,
    name: t.partitionConsumer(partition),
    filterSubject: t.partitionFilter(partition),
    // NOTE: no delivery limit. The processor alone decides a message is poison (and dead-letters it before it
    // terminates it); a limit here would drop good events during a database outage longer than the budget.
    maxDeliver: -1,
    // NOTE: a batch of ~1000 messages commits in well under a second; the default 30 s leaves room for a slow database.
    ackWaitMs: opts.ackWaitMs,
    maxAckPending: Math.max(opts.batchMessages * 4, 1000),
  });
}

/** The NATS KV bucket processors lease the event partitions in (PROCESSOR_PARTITIONS=auto). */
export function leaseBucketName(t: Topology): string {
  return `${t.eventsStream}_LEASES`;
}
