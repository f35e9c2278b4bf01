/**
 * Test-only: a stream and its consumer in one call each, the limits out of the way unless the test sets them (the
 * bus tests set the one limit they are about).
 */
import type { Bus, BusConsumer, ConsumerSpec, StreamSpec } from './bus.ts';

/** A stream `name` on `subject.>`: 1 s duplicate window, 1 min age, 1,000 messages, 1 MB, oldest dropped. */
export const testStream = (bus: Bus, name: string, subject: string, limits: Partial<StreamSpec> = {}): Promise<void> =>
  bus.ensureStream({
    name,
    subjects: [`${subject}.>`],
    duplicateWindowMs: 1000,
    maxAgeMs: 60_000,
    maxMsgs: 1000,
    maxBytes: 1_000_000,
    discard: 'old',
    ...limits,
  });

/** A consumer `name` of `stream` on `filterSubject`: no delivery limit, 1 s ack wait, 100 pending acks. */
export const testConsumer = (
  bus: Bus,
  stream: string,
  name: string,
  filterSubject: string,
  spec: Partial<ConsumerSpec> = {},
): Promise<BusConsumer> =>
  bus.ensureConsumer({ stream, name, filterSubject, maxDeliver: -1, ackWaitMs: 1000, maxAckPending: 100, ...spec });
