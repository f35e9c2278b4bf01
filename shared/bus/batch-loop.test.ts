import test from 'ava';
import { z } from 'zod';
import { MemoryBus } from './memory-bus.ts';
import { testConsumer, testStream } from './bus.test-support.ts';
import { runBatchLoop, type Delivered } from './batch-loop.ts';
import { createLogger } from '../logger.ts';
import type { BusMessage } from './bus.ts';

const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const Item = z.object({ n: z.number() });
const down = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

async function setup(values: unknown[]) {
  const bus = new MemoryBus();
  await testStream(bus, 'S', 'x', { duplicateWindowMs: 60_000 });
  const consumer = await testConsumer(bus, 'S', 'c', 'x.>', { ackWaitMs: 300 });
  for (const [i, v] of values.entries())
    await bus.publish('x.1', typeof v === 'string' ? new TextEncoder().encode(v) : enc(v), `m${i}`);
  return { bus, consumer };
}

/** Runs the loop until `done()` holds, then stops it. */
async function runUntil(
  o: Omit<
    Parameters<typeof runBatchLoop<{ n: number }>>[0],
    'signal' | 'log' | 'schema' | 'batchMessages' | 'fetchExpiresMs'
  >,
  done: () => boolean,
) {
  const abort = new AbortController();
  const loop = runBatchLoop({
    ...o,
    schema: Item,
    batchMessages: 10,
    fetchExpiresMs: 50,
    signal: abort.signal,
    log: createLogger('silent'),
    pauseMinMs: 20,
    pauseMaxMs: 50,
  });
  const deadline = Date.now() + 20_000;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  abort.abort();
  await loop;
}

test('a database outage longer than many ack waits pauses the loop: no message is dead-lettered, none charged a delivery', async (t) => {
  const { consumer } = await setup([{ n: 1 }, { n: 2 }, { n: 3 }]);
  let up = false;
  const stored: number[] = [];
  const deliveries: number[] = [];
  const dead: number[] = [];
  let pauses = 0;
  setTimeout(() => (up = true), 1500); // 5 ack waits
  await runUntil(
    {
      consumer,
      probe: async () => up,
      onPause: (p) => void (p && pauses++),
      handle: async (items: readonly Delivered<{ n: number }>[]) => {
        if (!up) throw down();
        for (const i of items) {
          stored.push(i.value.n);
          deliveries.push(i.msg.deliveryCount);
        }
      },
      deadLetter: async (m) => void dead.push(m.seq),
    },
    () => stored.length === 3,
  );
  t.deepEqual(stored.sort(), [1, 2, 3]);
  t.deepEqual(dead, []);
  t.deepEqual(deliveries, [1, 1, 1], 'held through the outage, never redelivered');
  t.is(pauses, 1);
  t.deepEqual(await consumer.pending(), { pending: 0, ackPending: 0 });
});

/**
 * Runs the loop over `values` until `stored` and `dead` values are stored and dead-lettered; a batch holding the
 * value `poison` fails with `err`, and the first `deadLetterFailures` dead-letter inserts meet an outage.
 */
async function runPoisoned(
  values: unknown[],
  poison: number,
  err: Error,
  want: { stored: number; dead: number },
  deadLetterFailures = 0,
) {
  const { consumer } = await setup(values);
  const stored: number[] = [];
  const dead: string[] = [];
  await runUntil(
    {
      consumer,
      probe: async () => true,
      handle: async (items) => {
        if (items.some((i) => i.value.n === poison)) throw err;
        for (const i of items) stored.push(i.value.n);
      },
      deadLetter: async (_m: BusMessage, reason: string) => {
        if (deadLetterFailures-- > 0) throw down();
        dead.push(reason);
      },
    },
    () => stored.length === want.stored && dead.length === want.dead,
  );
  return { consumer, stored, dead };
}

test('poison is isolated by content: the others commit; a dead-letter insert that meets an outage is retried until stored', async (t) => {
  // The dead-letter insert itself meets an outage first, twice.
  const { consumer, stored, dead } = await runPoisoned(
    [{ n: 1 }, { n: 666 }, 'not json', { n: 3 }],
    666,
    Object.assign(new Error('invalid byte sequence'), { code: '22021' }),
    { stored: 2, dead: 2 },
    2,
  );
  t.deepEqual(stored.sort(), [1, 3]);
  t.is(dead.length, 2);
  t.regex(dead.join('\n'), /undecodable/);
  t.regex(dead.join('\n'), /invalid byte sequence/);
  t.deepEqual(await consumer.pending(), { pending: 0, ackPending: 0 });
});

test('a failure that looks transient but repeats while the database answers is isolated, not retried forever', async (t) => {
  const { stored, dead } = await runPoisoned(
    [{ n: 1 }, { n: 2 }],
    2,
    Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
    { stored: 1, dead: 1 },
  );
  t.deepEqual(stored, [1]);
  t.is(dead.length, 1);
});

/**
 * Runs the loop over `values` until `want` of them are stored; a batch fails with what `fault(items, healed)` returns
 * (stored when it returns nothing), and the fault heals `healAfterMs` after the partition pauses. Resolves to the
 * values stored, the sequence numbers dead-lettered and the health reports.
 */
async function runHealing(
  values: unknown[],
  want: number,
  healAfterMs: number,
  fault: (items: readonly Delivered<{ n: number }>[], healed: boolean) => Error | undefined,
) {
  const { consumer } = await setup(values);
  let healed = false;
  const stored: number[] = [];
  const dead: number[] = [];
  const health: string[] = [];
  await runUntil(
    {
      consumer,
      probe: async () => true,
      onHealth: (h) => {
        health.push(h.state);
        if (h.state === 'paused') setTimeout(() => (healed = true), healAfterMs);
      },
      handle: async (items) => {
        const err = fault(items, healed);
        if (err) throw err;
        for (const i of items) stored.push(i.value.n);
      },
      deadLetter: async (m) => void dead.push(m.seq),
    },
    () => stored.length === want,
  );
  return { stored, dead, health };
}

test('a schema fault (undefined column) pauses the partition and reports it; nothing is isolated or dead-lettered', async (t) => {
  const { stored, dead, health } = await runHealing([{ n: 1 }, { n: 2 }, { n: 3 }], 3, 300, (_, migrated) =>
    migrated
      ? undefined
      : Object.assign(new Error('column "signal_count" of relation "sessions" does not exist'), { code: '42703' }),
  );
  t.deepEqual(dead, []);
  t.deepEqual(stored.sort(), [1, 2, 3]);
  t.deepEqual(health, ['paused', 'resumed']);
});

test('the poison breaker: after 3 messages in a row failed alone, the rest are held; one going through proves the partition healthy and only what still fails is dead-lettered', async (t) => {
  const values = [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }, { n: 5 }, { n: 6 }, { n: 7 }];
  // n=5 is real poison; everything else fails only until the fault heals.
  const { stored, dead, health } = await runHealing(values, 3, 200, (items, healed) =>
    !healed || items.some((i) => i.value.n === 5) ? new Error('rejected') : undefined,
  );
  t.deepEqual(dead, [1, 2, 3, 5], '3 before the breaker opened, then n=5 once another message went through');
  t.deepEqual(stored.sort(), [4, 6, 7]);
  t.true(health.includes('paused'));
  t.is(health[health.length - 1], 'resumed');
});
