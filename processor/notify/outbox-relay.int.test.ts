import test from 'ava';
import { sql } from 'kysely';
import { useTestDatabase } from '../../shared/testing/database.ts';
import { MemoryBus } from '../../shared/bus/memory-bus.ts';
import { JetStreamBus } from '../../shared/bus/jetstream-bus.ts';
import { testServices, uniqueTestId } from '../../shared/testing/services.ts';
import { ensureStreams } from '../../shared/bus/topology.ts';
import { topology } from '../../shared/contracts/subjects.ts';
import { createLogger } from '../../shared/logger.ts';
import { enqueueOutbox } from '../../shared/notify/outbox.ts';
import { OUTBOX_MAX_ATTEMPTS, OutboxRelay } from './outbox-relay.ts';
import { eventually } from '../../shared/testing/eventually.ts';

const handle = useTestDatabase(test, 'outbox');

/** The notify streams, and a consumer of every notification on them. */
async function notifyConsumer(bus: MemoryBus | JetStreamBus, topo: ReturnType<typeof topology>) {
  await ensureStreams(bus, topo);
  return bus.ensureConsumer({
    stream: topo.notifyStream,
    name: 'test',
    filterSubject: topo.allNotifyFilter,
    maxDeliver: -1,
    ackWaitMs: 30_000,
    maxAckPending: 1000,
  });
}

const msg = (aggregate: string, n: number) => ({
  kind: 'issue.updated',
  aggregate,
  msgId: `${aggregate}-${n}-${Math.random()}`,
  payload: { aggregate, n },
});

test.serial(
  'a failing row holds back only its own aggregate, is logged and retried, and order per aggregate holds; one relay at a time',
  async (t) => {
    const db = handle.db;
    await sql`delete from outbox`.execute(db);
    const bus = new MemoryBus();
    const topo = topology('', 1);
    const consumer = await notifyConsumer(bus, topo);
    const failing = new Set<string>();
    const publish = bus.publish.bind(bus);
    bus.publish = async (subject, data, id) => {
      if ([...failing].some((f) => id.startsWith(f))) throw new Error('payload refused');
      return publish(subject, data, id);
    };
    const logs: string[] = [];
    const log = createLogger('silent');
    log.warn = ((o: { msgId: string }, m: string) => void logs.push(`${m} ${o.msgId}`)) as typeof log.warn;
    log.error = ((o: { msgId: string }, m: string) => void logs.push(`${m} ${o.msgId}`)) as typeof log.error;

    await enqueueOutbox(db, [msg('A', 1), msg('B', 1), msg('A', 2), msg('B', 2)]);
    failing.add('A-1');
    const relay = new OutboxRelay({ db, bus, topology: topo, log });
    const other = new OutboxRelay({ db, bus, topology: topo, log });
    t.is(await relay.round(), 2, 'B1 and B2 go out; A1 failed, A2 waits behind it');
    t.is(await other.round(), 0, 'the second relay does not hold the lease');
    t.true(
      logs.some((l) => l.startsWith('outbox publish failed; will retry A-1')),
      logs.join('\n'),
    );
    t.is(await relay.round(), 0, 'A1 is not due yet, so A2 still waits');

    failing.clear();
    await sql`update outbox set next_attempt_at = now() - interval '1 second' where next_attempt_at is not null`.execute(
      db,
    );
    t.is(await relay.round(), 2);
    const got = (await consumer.fetch(10, 0)).map((m) => JSON.parse(new TextDecoder().decode(m.data)));
    t.deepEqual(
      got.map((p) => `${p.aggregate}${p.n}`),
      ['B1', 'B2', 'A1', 'A2'],
    );

    // A row failing on its own forever is given up after the bounded attempts, and releases its aggregate.
    await enqueueOutbox(db, [msg('C', 1), msg('C', 2)]);
    failing.add('C-1');
    for (let i = 0; i < OUTBOX_MAX_ATTEMPTS; i++) {
      await relay.round();
      await sql`update outbox set next_attempt_at = now() - interval '1 second' where failed_at is null and next_attempt_at is not null`.execute(
        db,
      );
    }
    t.true(logs.some((l) => l.startsWith('outbox row given up after repeated publish failures C-1')));
    const c1 = await sql<{
      attempts: number;
      failed: boolean;
    }>`select attempts, failed_at is not null as failed from outbox where msg_id like 'C-1-%'`.execute(db);
    t.deepEqual(c1.rows[0], { attempts: OUTBOX_MAX_ATTEMPTS, failed: true });
    t.is(await relay.round(), 1, 'C2 goes out once C1 was given up');
    const rest = (await consumer.fetch(10, 0)).map((m) => JSON.parse(new TextDecoder().decode(m.data)));
    t.deepEqual(
      rest.map((p) => `${p.aggregate}${p.n}`),
      ['C2'],
    );
    await relay.stop();
    t.true((await other.round()) >= 0);
  },
);

test.serial(
  'real JetStream: a row the server refuses on its own (larger than max_payload) is given up after the bounded attempts and releases its aggregate',
  async (t) => {
    const db = handle.db;
    await sql`delete from outbox`.execute(db);
    await sql`delete from outbox_lease`.execute(db); // the test before leaves its relay's lease
    const bus = await JetStreamBus.connect(testServices.natsUrl, createLogger('silent'));
    const topo = topology(`t${uniqueTestId()}`, 1);
    t.teardown(async () => {
      await bus.deleteStream(topo.notifyStream);
      await bus.deleteStream(topo.eventsStream);
      await bus.close();
    });
    const consumer = await notifyConsumer(bus, topo);
    // The NATS server's max_payload is 1 MiB by default: this row can never be published, whatever is retried.
    await enqueueOutbox(db, [{ ...msg('D', 1), payload: { big: 'x'.repeat(2 * 1024 * 1024) } }, msg('D', 2)]);
    const relay = new OutboxRelay({ db, bus, topology: topo, log: createLogger('silent') });
    for (let i = 0; i < OUTBOX_MAX_ATTEMPTS; i++) {
      await relay.round();
      await sql`update outbox set next_attempt_at = now() - interval '1 second' where next_attempt_at is not null and failed_at is null`.execute(
        db,
      );
    }
    const big = await db
      .selectFrom('outbox')
      .select(['attempts', 'failed_at', 'last_error'])
      .where('aggregate', '=', 'D')
      .orderBy('id')
      .executeTakeFirstOrThrow();
    t.is(big.attempts, OUTBOX_MAX_ATTEMPTS, big.last_error ?? '');
    t.truthy(big.failed_at, 'given up');
    t.is(await relay.round(), 1, 'D2 goes out once D1 is given up');
    const got = (await consumer.fetch(10, 500)).map((m) => JSON.parse(new TextDecoder().decode(m.data)));
    t.deepEqual(
      got.map((p) => `${p.aggregate}${p.n}`),
      ['D2'],
    );
  },
);

test.serial(
  "a sole relay (the embedded database's) takes over at once the lease a killed process left; any other waits it out",
  async (t) => {
    const db = handle.db;
    await sql`delete from outbox`.execute(db);
    // A process killed mid-lease: its lease runs 30 s more, and nothing gave it up.
    await sql`delete from outbox_lease`.execute(db);
    await sql`insert into outbox_lease (name, holder, until) values ('relay', 'killed', now() + interval '30 seconds')`.execute(
      db,
    );
    await enqueueOutbox(db, [msg('E', 1)]);
    const published = async () =>
      (await db.selectFrom('outbox').select('published_at').where('aggregate', '=', 'E').executeTakeFirstOrThrow())
        .published_at;
    const bus = new MemoryBus();
    const topo = topology('', 1);
    await notifyConsumer(bus, topo);
    const log = createLogger('silent');

    const waiting = new OutboxRelay({ db, bus, topology: topo, log });
    waiting.start();
    // Three polls of the relay's loop (1 s apart): none may take a lease that has not run out.
    await new Promise((r) => setTimeout(r, 2500));
    await waiting.stop();
    t.is(await published(), null, 'a relay that may have company waits the lease out');

    const sole = new OutboxRelay({ db, bus, topology: topo, log, sole: true });
    sole.start();
    t.teardown(() => sole.stop());
    await eventually(async () => (await published()) !== null, { timeoutMs: 10_000 });
    t.pass('the sole relay published at once');
  },
);
