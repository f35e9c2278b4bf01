import test from 'ava';
import { MemoryBus } from './memory-bus.ts';
import { subjectMatches } from './subject-match.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

async function setup(now = { t: 0 }) {
  const bus = new MemoryBus({ now: () => now.t });
  await bus.ensureStream({ name: 'EVENTS', subjects: ['events.v1.>'], duplicateWindowMs: 1000, maxAgeMs: 60_000 });
  const c0 = await bus.ensureConsumer({ stream: 'EVENTS', name: 'p0', filterSubject: 'events.v1.0.>', maxDeliver: 3, ackWaitMs: 500, maxAckPending: 100 });
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
  t.deepEqual(got.map((m) => dec(m.data)), ['a', 'c']);
  got[0].ack();
  got[1].nak(100);
  t.deepEqual(await c0.fetch(10, 0), []);
  now.t = 150;
  const again = await c0.fetch(10, 0);
  t.deepEqual(again.map((m) => [dec(m.data), m.deliveryCount]), [['c', 2]]);
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
  await bus.ensureStream({ name: 'S', subjects: ['x.>'], duplicateWindowMs: 1000, maxAgeMs: 60_000 });
  const c = await bus.ensureConsumer({ stream: 'S', name: 'c', filterSubject: 'x.>', maxDeliver: 3, ackWaitMs: 1000, maxAckPending: 10 });
  const pending = c.fetch(5, 2000);
  setTimeout(() => void bus.publish('x.1', enc('late'), 'l'), 50);
  t.deepEqual((await pending).map((m) => dec(m.data)), ['late']);
  const started = Date.now();
  t.deepEqual(await c.fetch(5, 100), []);
  t.true(Date.now() - started >= 90);
});
