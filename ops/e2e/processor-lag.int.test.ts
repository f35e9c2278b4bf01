import test from 'ava';
import { partitionOf } from '../../shared/contracts/subjects.ts';
import { processorRole } from '../../processor/main.ts';
import { DegradationMonitor } from '../../processor/dispatcher/degradation-monitor.ts';
import { apiClient } from '../../shared/testing/http-client.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { postJson } from '../../shared/testing/http-client.ts';
import { startTestStack } from '../testing/stack.ts';
import { eventually } from '../../shared/testing/eventually.ts';

test('processor lag: a backlog beyond the bound (messages, or seconds behind) is a processor_lag degradation event, recovered once the processor drains it', async (t) => {
  // The stack's monitor uses the message bound; the seconds bound is checked by a second monitor below.
  const stack = await startTestStack({
    processor: false,
    dispatcher: true,
    env: { PROCESSOR_LAG_DEGRADED_MESSAGES: '20', PROCESSOR_LAG_DEGRADED_SECONDS: '3600' },
  });
  t.teardown(() => stack.stop());
  const { tenant, infra } = stack;
  const api = apiClient(stack.baseUrl);
  const subject = `partition ${partitionOf(tenant.siteId, infra.topology.partitions)}`;
  const ingest = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const r = await postJson(`${stack.baseUrl}/v1/ingest`, sdkBatch({ page: `/lag-${i}`, events: 1 }), {
        authorization: `Bearer ${tenant.publishableKey}`,
      });
      t.is(r.status, 202);
    }
  };
  const lagOf = async (monitor: DegradationMonitor) =>
    (await monitor.check()).find((f) => f.kind === 'processor_lag' && f.subject === subject);
  const events = async () =>
    (
      (await api('GET', `/v1/query/degradation?org_id=${tenant.orgId}`, { token: tenant.owner.token })).body.data
        .events as Record<string, any>[]
    ).filter((e) => e.kind === 'processor_lag' && e.subject === subject);

  // A processor that keeps up: its partition is checked and healthy.
  let processor = await processorRole(infra).start();
  await ingest(1);
  await eventually(async () => (await lagOf(stack.monitor!))?.details?.messages === 0, {
    timeoutMs: 20_000,
    what: 'the first batch processed',
  });
  t.like(await lagOf(stack.monitor!), { degraded: false, orgId: null });
  await processor.running.stop();

  // Stopped: one waiting batch is within the message bound, but past a 1 s bound once it is older than that.
  await ingest(1);
  const bySeconds = new DegradationMonitor({
    db: infra.database.db,
    bus: infra.bus,
    topology: infra.topology,
    lagBound: { messages: 1_000_000, seconds: 1 },
    log: infra.log,
  });
  const late = await eventually(
    async () => {
      const f = await lagOf(bySeconds);
      return f?.degraded ? f : undefined;
    },
    { timeoutMs: 20_000, what: 'the waiting batch older than 1 s' },
  );
  t.is(late.details!.messages, 1);
  t.true((late.details!.oldest_age_seconds as number) > 1);
  t.like((await events())[0], { scope: 'instance', active: true, details: { max_seconds: 1, messages: 1 } });
  // Under the stack's bound (20 messages, an hour) the same backlog is no degradation: the event is recovered.
  t.like(await lagOf(stack.monitor!), { degraded: false });
  t.like((await events())[0], { active: false });

  // A backlog beyond 20 messages opens an event again.
  await ingest(25);
  const behind = await lagOf(stack.monitor!);
  t.true(behind!.degraded);
  t.is(behind!.details!.messages, 26);
  const open = (await events()).filter((e) => e.active);
  t.is(open.length, 1);
  t.like(open[0], {
    scope: 'instance',
    message: `event ${subject}: 26 message(s) not yet processed, the oldest waiting ${open[0]!.details.oldest_age_seconds} s (bound: 20 messages or 3600 s)`,
  });
  await stack.monitor!.check();
  t.is((await events()).filter((e) => e.active).length, 1);

  // The processor comes back and drains the backlog: recovered.
  processor = await processorRole(infra).start();
  t.teardown(() => processor.running.stop());
  await eventually(async () => (await lagOf(stack.monitor!))?.degraded === false, {
    timeoutMs: 30_000,
    what: 'the backlog drained',
  });
  const after = await events();
  t.is(after.filter((e) => e.active).length, 0);
  t.is(after.length, 2, 'the seconds event and the messages event, both recovered');
  t.true(after.every((e) => typeof e.recovered_at === 'string'));
});
