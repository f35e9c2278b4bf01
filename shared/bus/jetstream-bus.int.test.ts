import test, { type ExecutionContext } from 'ava';
import { JetStreamBus } from './jetstream-bus.ts';
import { ensurePartitionConsumer, ensureStreams } from './topology.ts';
import { topology } from '../contracts/subjects.ts';
import { createLogger } from '../logger.ts';
import { testServices, uniqueTestId } from '../testing/services.ts';

const enc = (s: string) => new TextEncoder().encode(s);

/** A connected bus with its own streams (a unique prefix), removed when the test ends. */
async function busWithStreams(t: ExecutionContext, partitions: number) {
  const bus = await JetStreamBus.connect(testServices.natsUrl, createLogger('silent'));
  const topo = topology(`t${uniqueTestId()}`, partitions);
  t.teardown(async () => {
    await bus.deleteStream(topo.eventsStream);
    await bus.deleteStream(topo.notifyStream);
    await bus.close();
  });
  await ensureStreams(bus, topo);
  return { bus, topo };
}

test('JetStream: msg-id dedup, partitioned durable consumers, ack and nak redelivery', async (t) => {
  const { bus, topo } = await busWithStreams(t, 2);
  await ensureStreams(bus, topo); // idempotent
  const site = crypto.randomUUID();
  const subject = topo.eventSubject(site);
  const p = Number(subject.split('.').at(-2));
  const consumer = await ensurePartitionConsumer(bus, topo, p, { batchMessages: 10, ackWaitMs: 30_000 });
  const other = await ensurePartitionConsumer(bus, topo, 1 - p, { batchMessages: 10, ackWaitMs: 30_000 });

  t.false((await bus.publish(subject, enc('one'), 'id-1')).duplicate);
  t.true((await bus.publish(subject, enc('one'), 'id-1')).duplicate);
  t.false((await bus.publish(subject, enc('two'), 'id-2')).duplicate);

  const got = await consumer.fetch(10, 1000);
  t.deepEqual(
    got.map((m) => new TextDecoder().decode(m.data)),
    ['one', 'two'],
  );
  t.deepEqual(await other.fetch(10, 1000), [], 'the other partition sees nothing of this site');
  got[0].ack();
  got[1].nak(10);
  const again = await consumer.fetch(10, 2000);
  t.is(again.length, 1);
  t.is(again[0].deliveryCount, 2);
  again[0].ack();
  await new Promise((r) => setTimeout(r, 100));
  t.deepEqual(await consumer.pending(), { pending: 0, ackPending: 0 });
  t.true(await bus.healthy());
});

test('JetStream: a batch takes what arrives within its window after the first message, then ends', async (t) => {
  const { bus, topo } = await busWithStreams(t, 1);
  const subject = topo.eventSubject(crypto.randomUUID());
  const consumer = await ensurePartitionConsumer(bus, topo, 0, { batchMessages: 10, ackWaitMs: 30_000 });
  await bus.publish(subject, enc('a'), 'a');
  const started = performance.now();
  const batch = consumer.fetch(10, 5000, 1000);
  setTimeout(() => void bus.publish(subject, enc('b'), 'b'), 30);
  const got = await batch;
  t.deepEqual(
    got.map((m) => new TextDecoder().decode(m.data)),
    ['a', 'b'],
  );
  t.true(performance.now() - started >= 990, 'held open for the window');
  for (const m of got) m.ack();
  // Window 0: the batch is what is there; a message published after it goes to the next one.
  await bus.publish(subject, enc('c'), 'c');
  const first = await consumer.fetch(10, 5000, 0);
  await bus.publish(subject, enc('d'), 'd');
  const second = await consumer.fetch(10, 5000, 0);
  t.deepEqual(
    [first, second].map((b) => b.map((m) => new TextDecoder().decode(m.data))),
    [['c'], ['d']],
  );
});

test('JetStream: a consumer that closes hands back what its client holds, within seconds rather than the ack wait', async (t) => {
  const { bus, topo } = await busWithStreams(t, 1);
  const subject = topo.eventSubject(crypto.randomUUID());
  for (const s of ['a', 'b', 'c']) await bus.publish(subject, enc(s), s);
  // The ack wait is 30 s: a message held by the first client would not reach the second within this test.
  const first = await ensurePartitionConsumer(bus, topo, 0, { batchMessages: 10, ackWaitMs: 30_000 });
  const one = await first.fetch(1, 5000, 0);
  t.deepEqual(
    one.map((m) => new TextDecoder().decode(m.data)),
    ['a'],
  );
  one[0].ack();
  await first.close();
  const second = await ensurePartitionConsumer(bus, topo, 0, { batchMessages: 10, ackWaitMs: 30_000 });
  const rest = await second.fetch(10, 10_000, 200);
  t.deepEqual(
    rest.map((m) => new TextDecoder().decode(m.data)),
    ['b', 'c'],
  );
  for (const m of rest) m.ack();
  await second.close();
});
