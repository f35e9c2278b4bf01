import type { Topology } from '../contracts/subjects.ts';
import type { Bus, BusConsumer } from './bus.ts';

/** Streams keep messages a week: long enough to replay after any outage we would survive. */
const STREAM_MAX_AGE_MS = 7 * 24 * 3600 * 1000;
/** Client retries within this window carry the same batch id and are dropped by the stream. */
const DUPLICATE_WINDOW_MS = 10 * 60 * 1000;

/** Creates the EVENTS, COMMANDS and NOTIFY streams (idempotent). */
export async function ensureStreams(bus: Bus, t: Topology): Promise<void> {
  await bus.ensureStream({ name: t.notifyStream, subjects: [t.allNotifyFilter], duplicateWindowMs: DUPLICATE_WINDOW_MS, maxAgeMs: STREAM_MAX_AGE_MS });
  await bus.ensureStream({ name: t.eventsStream, subjects: [t.allEventsFilter], duplicateWindowMs: DUPLICATE_WINDOW_MS, maxAgeMs: STREAM_MAX_AGE_MS });
  await bus.ensureStream({ name: t.commandsStream, subjects: [t.allCommandsFilter], duplicateWindowMs: DUPLICATE_WINDOW_MS, maxAgeMs: STREAM_MAX_AGE_MS });
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
