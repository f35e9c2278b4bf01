import test from 'ava';
import { MemoryBus } from './memory-bus.ts';
import { testConsumer, testStream } from './bus.test-support.ts';
import { subjectMatches } from './subject-match.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

async function setup(now = { t: 0 }) {
  const bus = new MemoryBus({ now: () => now.t });
  await testStream(bus, 'EVENTS', 'events.v1');
  const c0 = await testConsumer(bus, 'EVENTS', 'p0', 'events.v1.0.>', { maxDeliver: 3, ackWaitMs: 500 });
  return { bus, c0, now };
}

test('subject matching follows NATS wildcards', (t) => {
  t.true(subjectMatches('events.v1.>', 'events.v1.0.site'));
  t.false(subjectMatches('events.v1.>', 'events.v1'));
  t.true(subjectMatches('events.*.0.*', 'events.v1.0.site'));
  t.false(subjectMatches('events.v1.0.>', 'events.v1.1.site'));
});

test('msg ids dedupe within the window only', async (t) => {
  const { bus, now } = await setup();
  t.false((await bus.publish('events.v1.0.a', enc('1'), 'm1')).duplicate);
  t.true((await bus.publish('events.v1.0.a', enc('1'), 'm1')).duplicate);
  now.t = 2000;
  t.false((await bus.publish('events.v1.0.a', enc('1'), 'm1')).duplicate);
});

test('a consumer sees only its filter, in order; ack removes, nak redelivers after the delay', async (t) => {
  const { bus, c0, now } = await setup();
  await bus.publish('events.v1.0.a', enc('a'), 'a');
  await bus.publish('events.v1.1.b', enc('b'), 'b');
  await bus.publish('events.v1.0.c', enc('c'), 'c');
  const got = await c0.fetch(10, 0);
  t.deepEqual(
    got.map((m) => dec(m.data)),
    ['a', 'c'],
  );
  got[0].ack();
  got[1].nak(100);
  t.deepEqual(await c0.fetch(10, 0), []);
  now.t = 150;
  const again = await c0.fetch(10, 0);
  t.deepEqual(
    again.map((m) => [dec(m.data), m.deliveryCount]),
    [['c', 2]],
  );
  again[0].ack();
  t.deepEqual(await c0.pending(), { pending: 0, ackPending: 0 });
});

test('unacked messages come back after the ack wait, until max deliver', async (t) => {
  const { bus, c0, now } = await setup();
  await bus.publish('events.v1.0.a', enc('a'), 'a');
  for (let d = 1; d <= 3; d++) {
    const m = await c0.fetch(1, 0);
    t.is(m[0].deliveryCount, d);
    now.t += 600;
  }
  t.deepEqual(await c0.fetch(1, 0), [], 'dropped after max deliver');
});

test('fetch waits for a publish up to its expiry', async (t) => {
  const bus = new MemoryBus();
  await testStream(bus, 'S', 'x');
  const c = await testConsumer(bus, 'S', 'c', 'x.>', { maxDeliver: 3, maxAckPending: 10 });
  const pending = c.fetch(5, 2000);
  setTimeout(() => void bus.publish('x.1', enc('late'), 'l'), 50);
  t.deepEqual(
    (await pending).map((m) => dec(m.data)),
    ['late'],
  );
  const started = Date.now();
  t.deepEqual(await c.fetch(5, 100), []);
  t.true(Date.now() - started >= 90);
});

test('a stream nobody consumes keeps at most its limits: age, count and bytes, oldest dropped first', async (t) => {
  const now = { t: 0 };
  const bus = new MemoryBus({ now: () => now.t });
  await testStream(bus, 'N', 'n', { duplicateWindowMs: 10, maxAgeMs: 1000, maxMsgs: 3 });
  for (let i = 0; i < 10; i++) await bus.publish('n.x', enc(`m${i}`), `id${i}`);
  const c = await testConsumer(bus, 'N', 'late', 'n.>');
  t.deepEqual(
    (await c.fetch(10, 0)).map((m) => dec(m.data)),
    ['m7', 'm8', 'm9'],
    'count limit',
  );

  await testStream(bus, 'B', 'b', { duplicateWindowMs: 10, maxAgeMs: 1000, maxBytes: 3 * (100 + 3) });
  for (let i = 0; i < 10; i++) await bus.publish('b.x', new Uint8Array(100).fill(i), `b${i}`);
  const b = await testConsumer(bus, 'B', 'late', 'b.>');
  t.deepEqual(
    (await b.fetch(10, 0)).map((m) => m.data[0]),
    [7, 8, 9],
    'byte limit',
  );

  await testStream(bus, 'A', 'a', { duplicateWindowMs: 10, maxAgeMs: 1000 });
  await bus.publish('a.x', enc('old'), 'a0');
  now.t = 1500;
  await bus.publish('a.x', enc('new'), 'a1');
  const a = await testConsumer(bus, 'A', 'late', 'a.>');
  t.deepEqual(
    (await a.fetch(10, 0)).map((m) => dec(m.data)),
    ['new'],
    'age limit, with no consumer at all',
  );
});

test('a full stream with discard "new" refuses the publish (503) and keeps every message it accepted', async (t) => {
  const bus = new MemoryBus();
  await testStream(bus, 'E', 'e', { duplicateWindowMs: 60_000, maxMsgs: 2, discard: 'new' });
  const c = await testConsumer(bus, 'E', 'p', 'e.>');
  await bus.publish('e.x', enc('1'), '1');
  await bus.publish('e.x', enc('2'), '2');
  const err = await t.throwsAsync(bus.publish('e.x', enc('3'), '3'));
  t.is((err as { status?: number }).status, 503);
  const got = await c.fetch(10, 0);
  t.deepEqual(
    got.map((m) => dec(m.data)),
    ['1', '2'],
  );
  for (const m of got) m.ack();
  await bus.publish('e.x', enc('3'), '3'); // consumed messages free their room
  t.deepEqual(
    (await c.fetch(10, 0)).map((m) => dec(m.data)),
    ['3'],
  );
});

test('a stream without a byte limit is capped by the memory budget: unconsumed events beyond it are refused, not dropped', async (t) => {
  const bus = new MemoryBus({ memoryBudgetBytes: 3 * (10 + 3) });
  await testStream(bus, 'E', 'e', { duplicateWindowMs: 60_000, maxMsgs: -1, maxBytes: -1, discard: 'new' });
  for (let i = 0; i < 3; i++) await bus.publish('e.x', new Uint8Array(10), `m${i}`);
  await t.throwsAsync(bus.publish('e.x', new Uint8Array(10), 'm3'));
});

test('consumer lag: uncommitted messages of the consumer and the age of the oldest; null for a consumer that does not exist', async (t) => {
  const { bus, c0, now } = await setup();
  t.deepEqual(await bus.consumerLag('EVENTS', 'p0'), { messages: 0, oldestAgeMs: null });
  t.is(await bus.consumerLag('EVENTS', 'nobody'), null);
  t.is(await bus.consumerLag('NOPE', 'p0'), null);
  now.t = 100;
  await bus.publish('events.v1.1.x', enc('other partition'), 'x');
  await bus.publish('events.v1.0.a', enc('a'), 'a');
  now.t = 300;
  await bus.publish('events.v1.0.b', enc('b'), 'b');
  now.t = 1100;
  t.deepEqual(await bus.consumerLag('EVENTS', 'p0'), { messages: 2, oldestAgeMs: 1000 });
  const [a] = await c0.fetch(1, 0);
  t.deepEqual(
    await bus.consumerLag('EVENTS', 'p0'),
    { messages: 2, oldestAgeMs: 1000 },
    'delivered but not acked still counts',
  );
  a!.ack();
  t.deepEqual(await bus.consumerLag('EVENTS', 'p0'), { messages: 1, oldestAgeMs: 800 });
});

test('a batch takes what arrives within its window after the first message, then ends', async (t) => {
  const bus = new MemoryBus();
  await testStream(bus, 'S', 'x');
  const c = await testConsumer(bus, 'S', 'c', 'x.>', { maxDeliver: 3, ackWaitMs: 10_000, maxAckPending: 10 });
  await bus.publish('x.1', enc('a'), 'a');
  const started = performance.now();
  const batch = c.fetch(10, 1000, 1000);
  setTimeout(() => void bus.publish('x.1', enc('b'), 'b'), 30);
  t.deepEqual(
    (await batch).map((m) => dec(m.data)),
    ['a', 'b'],
  );
  t.true(performance.now() - started >= 990, 'held open for the window');
  // Window 0: the batch is what is there; a message published after it goes to the next one.
  await bus.publish('x.1', enc('c'), 'c');
  const now = await c.fetch(10, 1000, 0);
  await bus.publish('x.1', enc('d'), 'd');
  t.deepEqual(
    now.map((m) => dec(m.data)),
    ['c'],
  );
  t.deepEqual(
    (await c.fetch(10, 1000, 0)).map((m) => dec(m.data)),
    ['d'],
  );
});
