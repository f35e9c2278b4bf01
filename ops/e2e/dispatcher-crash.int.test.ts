import type { ChildProcess } from 'node:child_process';
import test from 'ava';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { encode } from '../../shared/contracts/codec.ts';
import { newId } from '../../shared/ids.ts';
import { apiClient } from '../../shared/testing/http-client.ts';
import { startTestStack } from '../testing/stack.ts';
import { startReceiver } from '../testing/webhook-receiver.ts';
import { kill, spawnRole } from '../../shared/testing/processes.ts';
import { eventually } from '../../shared/testing/eventually.ts';

/** `friction dispatcher` as its own OS process, so the test can SIGKILL it. */
const spawnDispatcher = (env: Record<string, string>): ChildProcess =>
  spawnRole(['ops/cli.ts', 'dispatcher'], {
    ...env,
    OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
    PROCESSOR_ACK_WAIT_MS: '3000',
  });

test('a dispatcher SIGKILLed while waiting to retry loses and duplicates nothing; two dispatchers at once never send one event twice', async (t) => {
  const stack = await startTestStack({ processor: false, env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' } });
  // The stack's instance secret: the dispatcher unseals the endpoint's signing secret with it.
  const env = {
    DATABASE_URL: stack.databaseUrl!,
    NATS_URL: stack.config.NATS_URL!,
    STREAM_PREFIX: stack.config.STREAM_PREFIX,
    EVENT_PARTITIONS: String(stack.config.EVENT_PARTITIONS),
    FRICTION_SECRET: stack.config.FRICTION_SECRET!,
  };
  const procs: ChildProcess[] = [];
  t.teardown(async () => {
    for (const p of procs) await kill(p, 'SIGKILL');
    await stack.stop();
  });
  const db = stack.infra.database.db;
  const api = apiClient(stack.baseUrl);
  const { tenant } = stack;
  const rx = await startReceiver(({ index }) => ({ status: index === 0 ? 500 : 200 }));
  t.teardown(() => rx.close());
  const created = await api('POST', '/v1/manage/webhooks', {
    token: tenant.owner.token,
    body: { org_id: tenant.orgId, url: rx.url },
  });
  const wh = new Webhook(created.body.data.signing_secret);
  const publish = async (i: number) => {
    const id = `issue.created:test-${i}:${newId()}`;
    await stack.infra.bus.publish(
      stack.infra.topology.notifySubject('issue.created'),
      encode({ event: 'issue.created', notification_id: id, issue: { id: newId(), site_id: tenant.siteId, n: i } }),
      id,
    );
  };
  const attempts = async () =>
    (await sql<{ n: number }>`select count(*)::int as n from delivery_attempts`.execute(db)).rows[0]!.n;

  procs.push(spawnDispatcher(env));
  await publish(0);
  await eventually(async () => (await attempts()) >= 1, { timeoutMs: 120_000, what: 'first attempt recorded' });
  await kill(procs[0]!, 'SIGKILL'); // mid-retry: the next attempt is due in about 5 s
  procs.push(spawnDispatcher(env), spawnDispatcher(env));
  await eventually(async () => (await attempts()) >= 2, { timeoutMs: 120_000, what: 'retry after the restart' });
  for (let i = 1; i <= 60; i++) await publish(i);
  await eventually(
    async () =>
      (
        await sql<{
          n: number;
        }>`select count(*)::int as n from notification_deliveries where status = 'succeeded'`.execute(db)
      ).rows[0]!.n === 61,
    { timeoutMs: 120_000, what: '61 deliveries succeeded' },
  );
  await new Promise((r) => setTimeout(r, 1500));

  const byId = new Map<string, number[]>();
  for (const r of rx.received) {
    wh.verify(r.body, r.headers as Record<string, string>);
    const id = r.headers['webhook-id'] as string;
    byId.set(id, [...(byId.get(id) ?? []), r.status]);
  }
  t.is(byId.size, 61, 'every event arrived');
  const statuses = [...byId.values()];
  t.is(statuses.filter((s) => s.length === 2).length, 1, 'only the first event was retried');
  t.deepEqual(
    statuses.find((s) => s.length === 2),
    [500, 200],
  );
  t.true(
    statuses.every((s) => s.filter((x) => x === 200).length === 1),
    'exactly one success per event',
  );
  t.is(await attempts(), 62);
});
