/** Test-only: the notifications published on NOTIFY, read by a consumer of the test's own. */
import { uniqueTestId } from '../../shared/testing/services.ts';
import type { TestStack } from './stack.ts';

/**
 * Every notification on `notify.v1.<kinds>` (a subject filter: `issue.updated`, `alert.>`) consumed so far, acked as
 * read and accumulated across `drain` calls (`T` is the shape the test reads).
 */
export async function notifyLog<T>(stack: TestStack, kinds: string) {
  const topo = stack.infra.topology;
  const consumer = await stack.infra.bus.ensureConsumer({
    stream: topo.notifyStream,
    name: `test-notify-${uniqueTestId()}`,
    filterSubject: topo.notifySubject(kinds),
    maxDeliver: 1,
    ackWaitMs: 30_000,
    maxAckPending: 1000,
  });
  const seen: T[] = [];
  return {
    seen,
    /** Adds what is there now (up to 100 notifications) and returns all seen. */
    async drain(): Promise<T[]> {
      for (const m of await consumer.fetch(100, 200)) {
        seen.push(JSON.parse(new TextDecoder().decode(m.data)) as T);
        m.ack();
      }
      return seen;
    },
  };
}
