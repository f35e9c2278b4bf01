import test from 'ava';
import { JetStreamBus } from './jetstream-bus.ts';
import { ensurePartitionConsumer, ensureStreams } from './topology.ts';
import { topology } from '../contracts/subjects.ts';
import { createLogger } from '../logger.ts';
import { testServices, uniqueTestId } from '../testing/services.ts';

const enc = (s: string) => new TextEncoder().encode(s);

test('JetStream: msg-id dedup, partitioned durable consumers, ack and nak redelivery', async (t) => {
  const bus = await JetStreamBus.connect(testServices.natsUrl, createLogger('silent'));
  const topo = topology(`t${uniqueTestId()}`, 2);
  t.teardown(async () => {
    await bus.deleteStream(topo.eventsStream);
    await bus.deleteStream(topo.commandsStream);
    await bus.deleteStream(topo.notifyStream);
    await bus.close();
  });
  await ensureStreams(bus, topo);
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
  t.deepEqual(got.map((m) => new TextDecoder().decode(m.data)), ['one', 'two']);
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
