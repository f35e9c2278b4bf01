import test from 'ava';
import { sql } from 'kysely';
import { startTestStack } from '../testing/stack.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { postJson } from '../../shared/testing/http-client.ts';
import { startPrivatePostgres } from '../../shared/testing/postgres-server.ts';
import { JetStreamBus } from '../../shared/bus/jetstream-bus.ts';
import { ingestRole } from '../../ingest/main.ts';

// The outage lasts 25 ack waits. Before typed outcomes, every failed attempt spent a delivery (nak with backoff,
// or the ack wait running out) and the 10th terminated the message: an outage this long dropped accepted events.
const ACK_WAIT_MS = 1000;
const OUTAGE_MS = 25_000;

test('PostgreSQL down far longer than any delivery budget: every accepted event is stored afterwards, nothing dead-lettered', async (t) => {
  const pg = await startPrivatePostgres();
  t.teardown(() => pg.dispose());
  const stack = await startTestStack({
    databaseUrl: pg.url,
    env: {
      PROCESSOR_ACK_WAIT_MS: String(ACK_WAIT_MS),
      DATABASE_CONNECT_TIMEOUT_MS: '500',
      // Ingest keeps accepting during the outage from its key and quota caches: that is the traffic at risk.
      KEY_CACHE_TTL_MS: '600000',
      QUOTA_CACHE_TTL_MS: '600000',
    },
  });
  t.teardown(() => stack.stop());
  const db = stack.infra.database.db;
  const auth = { authorization: `Bearer ${stack.tenant.publishableKey}` };
  const storedCount = async () =>
    (await sql<{ n: number }>`select count(*)::int as n from events where site_id = ${stack.tenant.siteId}`.execute(db))
      .rows[0].n;

  let accepted = 0;
  const send = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const b = sdkBatch({ events: 5, sessionId: `s-${i % 9}`, page: `/p${i % 3}` });
      const r = await postJson(`${stack.baseUrl}/v1/ingest`, b, auth);
      t.is(r.status, 202, JSON.stringify(r.body));
      accepted += r.body.data.accepted;
    }
  };
  await send(10);
  await eventually(async () => (await storedCount()) === accepted, { timeoutMs: 30_000, stepMs: 100 });

  await pg.stop();
  const downSince = Date.now();
  await send(20); // accepted while the database is down: these sit in the stream
  // Ingest on its own reports not ready (it needs the database for cold key and quota lookups).
  const ingestChecks = new Map(ingestRole(stack.infra).checks.map(([name, check]) => [name, check] as const));
  t.deepEqual([...ingestChecks.keys()].sort(), ['bus', 'database', 'redis']);
  t.false(await ingestChecks.get('database')!().catch(() => false));
  const beforeOutage = accepted;
  t.true(beforeOutage > 50);
  while (Date.now() - downSince < OUTAGE_MS) {
    await send(1);
    await new Promise((r) => setTimeout(r, 1000));
  }
  await pg.start();
  t.true(await eventually(() => ingestChecks.get('database')!(), { timeoutMs: 30_000, stepMs: 200 }));

  const final = await eventually(
    async () => {
      const n = await storedCount();
      return n === accepted ? n : undefined;
    },
    { timeoutMs: 60_000, stepMs: 200 },
  );
  t.is(final, accepted, 'stored = accepted');
  const dead = await sql<{ n: number }>`select count(*)::int as n from dead_letters`.execute(db);
  t.is(dead.rows[0].n, 0, 'no message was dead-lettered for an outage');
  const distinct = await sql<{
    n: number;
  }>`select count(distinct id)::int as n from events where site_id = ${stack.tenant.siteId}`.execute(db);
  t.is(distinct.rows[0].n, accepted, 'no event stored twice');
  const sessions = await sql<{
    total: number;
  }>`select coalesce(sum(event_count), 0)::int as total from sessions where site_id = ${stack.tenant.siteId}`.execute(
    db,
  );
  t.is(sessions.rows[0].total, accepted, 'each event counted once in its session');

  // The durable consumers have no delivery limit: only the processor decides what is poison.
  const bus = stack.infra.bus as JetStreamBus;
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const jsm = await jetstreamManager(bus.nc);
  for await (const c of jsm.consumers.list(stack.infra.topology.eventsStream)) t.is(c.config.max_deliver, -1, c.name);
});
