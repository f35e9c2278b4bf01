import test from 'ava';
import { appendFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../logger.ts';
import { DurableBus, type DurableBusOptions } from './durable-bus.ts';
import type { StreamSpec } from './bus.ts';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
const log = createLogger('silent');

const STREAM: StreamSpec = {
  name: 'EVENTS',
  subjects: ['events.v1.>'],
  duplicateWindowMs: 60_000,
  maxAgeMs: 3_600_000,
  maxMsgs: -1,
  maxBytes: -1,
  discard: 'new',
};

async function openBus(dir: string, opts: DurableBusOptions = {}) {
  const bus = await DurableBus.open(dir, log, { checkpointMs: 3_600_000, ...opts });
  await bus.ensureStream(STREAM);
  const consumer = await bus.ensureConsumer({
    stream: 'EVENTS',
    name: 'p0',
    filterSubject: 'events.v1.>',
    maxDeliver: -1,
    ackWaitMs: 30_000,
    maxAckPending: 1000,
  });
  return { bus, consumer };
}

function tempDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'friction-bus-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('a closed bus gives back, after a restart, exactly what was published and not acknowledged', async (t) => {
  const dir = tempDir(t);
  const first = await openBus(dir);
  for (let i = 0; i < 10; i++) await first.bus.publish('events.v1.0.a', enc(`m${i}`), `id${i}`);
  const got = await first.consumer.fetch(4, 100, 0);
  for (const m of got) m.ack();
  await first.bus.close();

  const second = await openBus(dir);
  const rest = await second.consumer.fetch(100, 100, 0);
  t.deepEqual(
    rest.map((m) => dec(m.data)),
    ['m4', 'm5', 'm6', 'm7', 'm8', 'm9'],
  );
  t.deepEqual(
    rest.map((m) => m.seq),
    [5, 6, 7, 8, 9, 10],
    'sequences continue',
  );
  t.true((await second.bus.publish('events.v1.0.a', enc('again'), 'id3')).duplicate, 'ids stay deduplicated');
  t.is((await second.bus.publish('events.v1.0.a', enc('m10'), 'id10')).seq, 11);
  await second.bus.close();
});

test('a bus never closed (a crash) loses nothing whose publish resolved: it delivers from the last checkpoint', async (t) => {
  const dir = tempDir(t);
  const crashed = await openBus(dir);
  await Promise.all(
    Array.from({ length: 500 }, (_, i) => crashed.bus.publish('events.v1.0.a', enc(`m${i}`), `id${i}`)),
  );
  // Never closed, never checkpointed: as after SIGKILL.
  const after = await openBus(dir);
  const all = await after.consumer.fetch(1000, 100, 0);
  t.is(all.length, 500);
  t.deepEqual(new Set(all.map((m) => dec(m.data))).size, 500);
  await after.bus.close();
});

test('a write cut short by a crash is skipped; the whole records before it are replayed', async (t) => {
  const dir = tempDir(t);
  const crashed = await openBus(dir);
  for (let i = 0; i < 3; i++) await crashed.bus.publish('events.v1.0.a', enc(`m${i}`), `id${i}`);
  const segment = readdirSync(dir).find((f) => f.endsWith('.log'))!;
  appendFileSync(join(dir, segment), Buffer.from([200, 0, 0, 0, 1, 2, 3, 4, 5]));
  const after = await openBus(dir);
  t.deepEqual(
    (await after.consumer.fetch(100, 100, 0)).map((m) => dec(m.data)),
    ['m0', 'm1', 'm2'],
  );
  t.is((await after.bus.publish('events.v1.0.a', enc('m3'), 'id3')).seq, 4);
  await after.bus.close();
  const again = await openBus(dir);
  t.is((await again.consumer.fetch(100, 100, 0)).length, 4, 'the torn tail does not hide later segments');
  await again.bus.close();
});

test('segments every consumer acknowledged are deleted; an unacknowledged message keeps its segment', async (t) => {
  const dir = tempDir(t);
  const { bus, consumer } = await openBus(dir, { segmentBytes: 200, checkpointMs: 20 });
  for (let i = 0; i < 20; i++) await bus.publish('events.v1.0.a', enc(`message ${i}`), `id${i}`);
  const segments = () => readdirSync(dir).filter((f) => f.endsWith('.log')).length;
  const before = segments();
  t.true(before > 3);
  const msgs = await consumer.fetch(100, 100, 0);
  for (const m of msgs.slice(1)) m.ack();
  await new Promise((r) => setTimeout(r, 100));
  t.is(segments(), before, 'the first message is not acknowledged: nothing goes');
  msgs[0].ack();
  const deadline = Date.now() + 5000;
  while (segments() > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.is(segments(), 1, 'only the segment being written stays');
  await bus.close();
  const after = await openBus(dir);
  t.is((await after.consumer.fetch(100, 100, 0)).length, 0);
  t.is((await after.bus.publish('events.v1.0.a', enc('next'), 'id-next')).seq, 21);
  await after.bus.close();
});

test('publishes that arrive together resolve in sequence order, each once durable', async (t) => {
  const dir = tempDir(t);
  const { bus, consumer } = await openBus(dir);
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) => bus.publish('events.v1.0.a', enc(`m${i}`), `id${i}`)),
  );
  t.deepEqual(
    results.map((r) => r.seq),
    Array.from({ length: 200 }, (_, i) => i + 1),
  );
  t.is((await consumer.fetch(1000, 100, 0)).length, 200);
  await bus.close();
});
