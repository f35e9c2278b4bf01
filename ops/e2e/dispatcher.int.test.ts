import test, { type ExecutionContext } from 'ava';
import { Webhook } from 'standardwebhooks';
import { encode } from '../../shared/contracts/codec.ts';
import { newId } from '../../shared/ids.ts';
import { apiClient } from '../../shared/testing/http-client.ts';
import type { TestStack } from '../testing/stack.ts';
import { clockedDispatcher } from '../testing/dispatcher-stack.ts';
import { insertSessionRow } from '../testing/rows.ts';
import { startReceiver } from '../testing/webhook-receiver.ts';
import { eventually } from '../../shared/testing/eventually.ts';

const MIN = 60_000;

async function publishNotification(
  stack: TestStack,
  kind: string,
  payload: Record<string, unknown>,
  notificationId = `${kind}:${newId()}`,
): Promise<string> {
  await stack.infra.bus.publish(
    stack.infra.topology.notifySubject(kind),
    encode({ ...payload, notification_id: notificationId }),
    notificationId,
  );
  return notificationId;
}

async function clockedStack(t: ExecutionContext) {
  const { stack, start, now, advance } = await clockedDispatcher(t);
  /** Waits until `n` attempts are recorded (the receiver sees a request before its attempt is stored). */
  const attempts = (n: number) =>
    eventually(
      async () =>
        Number(
          (
            await stack.infra.database.db
              .selectFrom('delivery_attempts')
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        ) >= n,
      { timeoutMs: 20_000, what: `${n} attempts recorded` },
    );
  return { stack, advance, attempts, start, now };
}

test('a receiver failing then recovering gets exactly one successful delivery, same webhook-id, every signature verifiable with standardwebhooks; the log shows each attempt', async (t) => {
  const { stack, advance, attempts, start } = await clockedStack(t);
  const api = apiClient(stack.baseUrl);
  const { tenant } = stack;
  const rx = await startReceiver(({ index }) =>
    index < 2 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 204 },
  );
  t.teardown(() => rx.close());
  const created = await api('POST', '/v1/manage/webhooks', {
    token: tenant.owner.token,
    body: { org_id: tenant.orgId, url: `${rx.url}/hooks`, events: ['issue.created'] },
  });
  t.is(created.status, 201, created.text);
  const secret: string = created.body.data.signing_secret;
  t.regex(secret, /^whsec_[A-Za-z0-9+/]+=*$/);

  const nid = await publishNotification(stack, 'issue.created', {
    event: 'issue.created',
    occurred_at: '2026-03-02T09:59:00.000Z',
    issue: { id: newId(), site_id: tenant.siteId, title: 'Rage clicks on Pay' },
  });
  await attempts(1);
  advance(5 * 1000); // first retry after 5 s (jitter fixed at the middle)
  await attempts(2);
  advance(5 * MIN);
  await attempts(3);
  // Nothing more, however long we wait, and a second publication of the same notification adds nothing.
  await publishNotification(
    stack,
    'issue.created',
    { event: 'issue.created', issue: { id: newId(), site_id: tenant.siteId } },
    nid,
  );
  advance(2 * 24 * 60 * MIN);
  await new Promise((r) => setTimeout(r, 1500));
  t.is(rx.received.length, 3);

  const wh = new Webhook(secret);
  const ids = new Set(rx.received.map((r) => r.headers['webhook-id']));
  t.is(ids.size, 1, 'webhook-id is stable across retries');
  for (const r of rx.received) {
    const payload = wh.verify(r.body, r.headers as Record<string, string>) as Record<string, any>;
    t.is(r.headers['x-service-signature'], r.headers['webhook-signature']);
    t.like(payload, {
      type: 'issue.created',
      site_id: tenant.siteId,
      timestamp: '2026-03-02T09:59:00.000Z',
      data: { issue: { title: 'Rage clicks on Pay' } },
    });
    t.is(payload.id, r.headers['webhook-id']);
    t.false('notification_id' in payload.data);
    t.true(Buffer.byteLength(r.body) < 20_000);
  }
  t.deepEqual(
    rx.received.map((r) => r.status),
    [503, 503, 204],
  );

  const log = await api('GET', `/v1/query/webhook-deliveries?org_id=${tenant.orgId}`, { token: tenant.owner.token });
  t.is(log.status, 200, log.text);
  const rows = log.body.data.deliveries as Record<string, any>[];
  // The receiver is on loopback (a private-network target): the log keeps only the status class (issue 30 N8).
  t.deepEqual(
    rows.map((r) => [r.attempt, r.status, r.http_status]),
    [
      [3, 'succeeded', 200],
      [2, 'failed', 500],
      [1, 'failed', 500],
    ],
  );
  t.is(
    rows[2]!.next_attempt_at,
    new Date(start + 5000).toISOString(),
    'retry after the scheduled 5 s (Retry-After: 1 is shorter)',
  );
  t.is(rows[0]!.next_attempt_at, null);
  t.true(rows.every((r) => r.event_id === [...ids][0] && r.channel === 'webhook' && r.target === `${rx.url}/hooks`));
  const ep = (await api('GET', `/v1/manage/webhooks?org_id=${tenant.orgId}`, { token: tenant.owner.token })).body.data
    .endpoints[0];
  t.like(ep, { active: true, consecutive_failures: 0, failing_since: null }, 'a success clears the failure streak');
  const limited = await api('GET', `/v1/query/webhook-deliveries?org_id=${tenant.orgId}&limit=1`, {
    token: tenant.owner.token,
  });
  t.is(limited.body.data.deliveries.length, 1);
  t.is(
    (await api('GET', `/v1/query/webhook-deliveries?org_id=${tenant.orgId}&limit=501`, { token: tenant.owner.token }))
      .status,
    400,
  );
  const other = await stack.newTenant();
  t.is(
    (await api('GET', `/v1/query/webhook-deliveries?org_id=${tenant.orgId}`, { token: other.owner.token })).status,
    404,
    'org-scoped',
  );

  // The operator sees the same attempts by outcome (other tests of this file add to the process's counters).
  const metrics = await (await fetch(`${stack.baseUrl}/metrics`)).text();
  const count = (outcome: string) =>
    Number(
      new RegExp(`^friction_deliveries_total\\{channel="webhook",outcome="${outcome}"\\} (\\d+)$`, 'm').exec(
        metrics,
      )?.[1] ?? 0,
    );
  t.true(
    count('retrying') >= 2,
    metrics
      .split('\n')
      .filter((l) => l.startsWith('friction_deliveries'))
      .join('\n'),
  );
  t.true(count('succeeded') >= 1);
});

test('Retry-After longer than the schedule is honoured', async (t) => {
  const { stack, advance, attempts } = await clockedStack(t);
  const api = apiClient(stack.baseUrl);
  const { tenant } = stack;
  const rx = await startReceiver(({ index }) =>
    index === 0 ? { status: 429, headers: { 'retry-after': '120' } } : { status: 200 },
  );
  t.teardown(() => rx.close());
  await api('POST', '/v1/manage/webhooks', { token: tenant.owner.token, body: { org_id: tenant.orgId, url: rx.url } });
  await publishNotification(stack, 'deploy.recorded', {
    site_id: tenant.siteId,
    deploy: { id: newId(), site_id: tenant.siteId, version: 'v2' },
  });
  await attempts(1);
  advance(60 * 1000);
  await new Promise((r) => setTimeout(r, 1000));
  t.is(rx.received.length, 1, 'not before Retry-After');
  advance(61 * 1000);
  await rx.waitFor(2);
  t.is(rx.received[1]!.status, 200);
});

test('410 Gone disables the endpoint at once: recorded on the endpoint, a degradation event, no retry; the test route sends a signed webhook.test', async (t) => {
  const { stack, advance, attempts } = await clockedStack(t);
  const api = apiClient(stack.baseUrl);
  const { tenant } = stack;
  let gone = false;
  const rx = await startReceiver(() => ({ status: gone ? 410 : 200 }));
  t.teardown(() => rx.close());
  const created = await api('POST', '/v1/manage/webhooks', {
    token: tenant.owner.token,
    body: { org_id: tenant.orgId, site_id: tenant.siteId, url: rx.url },
  });
  const id = created.body.data.endpoint.id as string;
  const sent = await api('POST', `/v1/manage/webhooks/${id}/test`, { token: tenant.owner.token });
  t.is(sent.status, 202, sent.text);
  advance(MIN); // the API stamps the test delivery with the wall clock, ahead of this test's clock
  const [first] = await rx.waitFor(1);
  const payload = new Webhook(created.body.data.signing_secret).verify(
    first!.body,
    first!.headers as Record<string, string>,
  ) as Record<string, any>;
  t.like(payload, { id: sent.body.data.event_id, type: 'webhook.test', site_id: tenant.siteId });

  gone = true;
  await publishNotification(stack, 'alert.triggered', {
    site_id: tenant.siteId,
    alert: { id: newId(), site_id: tenant.siteId, rule_name: 'r' },
  });
  await attempts(2);
  const hook = await eventually(
    async () => {
      const list = await api('GET', `/v1/manage/webhooks?org_id=${tenant.orgId}`, { token: tenant.owner.token });
      const h = list.body.data.endpoints.find((e: { id: string }) => e.id === id);
      return h && !h.active ? h : undefined;
    },
    { timeoutMs: 20_000, what: 'endpoint disabled' },
  );
  t.like(hook, {
    active: false,
    enabled: false,
    disabled_reason: 'the endpoint answered 410 Gone',
    consecutive_failures: 1,
  });
  t.truthy(hook.disabled_at);
  advance(3 * 24 * 60 * MIN);
  await new Promise((r) => setTimeout(r, 1000));
  t.is(rx.received.length, 2, 'never retried');
  t.regex(
    await (await fetch(`${stack.baseUrl}/metrics`)).text(),
    /^friction_deliveries_total\{channel="webhook",outcome="failed"\} [1-9]\d*$/m,
    'a disabling failure is counted as failed, not retrying',
  );
  const deg = await api('GET', `/v1/query/degradation?org_id=${tenant.orgId}`, { token: tenant.owner.token });
  t.is(deg.status, 200, deg.text);
  t.like(deg.body.data.events[0], { kind: 'endpoint_disabled', subject: id, active: true, scope: 'org' });
  t.is((await api('POST', `/v1/manage/webhooks/${id}/test`, { token: tenant.owner.token })).status, 409);
  // Re-enabling clears the record and closes the degradation event.
  const re = await api('PATCH', `/v1/manage/webhooks/${id}`, { token: tenant.owner.token, body: { active: true } });
  t.like(re.body.data, { active: true, disabled_reason: null, disabled_at: null, consecutive_failures: 0 });
  const after = await api('GET', `/v1/query/degradation?org_id=${tenant.orgId}`, { token: tenant.owner.token });
  t.like(after.body.data.events[0], { kind: 'endpoint_disabled', active: false });
});

test('20 failures in a row disable an endpoint only once they span 5 days', async (t) => {
  const { stack, advance, attempts, start } = await clockedStack(t);
  const api = apiClient(stack.baseUrl);
  const { tenant } = stack;
  const rx = await startReceiver(() => ({ status: 500 }));
  t.teardown(() => rx.close());
  const created = await api('POST', '/v1/manage/webhooks', {
    token: tenant.owner.token,
    body: { org_id: tenant.orgId, url: rx.url, events: ['score.spike'] },
  });
  const id = created.body.data.endpoint.id as string;
  // 20 events' first attempts within a minute: 20 failures, but not over 5 days: still active.
  for (let i = 0; i < 20; i++)
    await publishNotification(stack, 'score.spike', { site_id: tenant.siteId, page: `/p${i}` });
  await attempts(20);
  const endpoint = async () =>
    (
      await api('GET', `/v1/manage/webhooks?org_id=${tenant.orgId}`, { token: tenant.owner.token })
    ).body.data.endpoints.find((e: { id: string }) => e.id === id);
  await eventually(async () => (await endpoint()).consecutive_failures >= 20, {
    timeoutMs: 20_000,
    what: '20 failures recorded',
  });
  t.true((await endpoint()).active);
  // Five days later the retries still fail: the streak now spans 5 days, so the endpoint is disabled.
  advance(5 * 24 * 60 * MIN + MIN);
  const disabled = await eventually(
    async () => {
      const e = await endpoint();
      return e.active ? undefined : e;
    },
    { timeoutMs: 30_000, what: 'endpoint disabled after 5 days' },
  );
  t.regex(disabled.disabled_reason, /^2\d failed attempts in a row since /);
  t.true(Date.parse(disabled.failing_since) - start < MIN);
});

test('degradation: dead-lettered batches and an org over its session quota are recorded, then recovered; /query/degradation lists org and instance events', async (t) => {
  const { stack, advance } = await clockedStack(t);
  const api = apiClient(stack.baseUrl);
  const { tenant } = stack;
  const db = stack.infra.database.db;
  await db
    .insertInto('dead_letters')
    .values({ stream: 'EVENTS', subject: 'events.v1.0.x', stream_seq: 1, reason: 'poison: test', payload: '{}' })
    .execute();
  await db.updateTable('orgs').set({ session_limit: 0 }).where('id', '=', tenant.orgId).execute();
  await insertSessionRow(db, { siteId: tenant.siteId, id: 'over-1', page: '/', views: 1 });
  await stack.monitor!.check();
  const read = async () =>
    (await api('GET', `/v1/query/degradation?org_id=${tenant.orgId}`, { token: tenant.owner.token })).body.data
      .events as Record<string, any>[];
  const open = await read();
  t.like(
    open.find((e) => e.kind === 'dead_letters'),
    { scope: 'instance', active: true, subject: 'pipeline' },
  );
  t.like(
    open.find((e) => e.kind === 'over_quota'),
    { scope: 'org', active: true, subject: tenant.orgId },
  );
  t.falsy(open.find((e) => e.kind === 'bus_unreachable'));
  // Another org sees the instance-wide event, never this org's quota.
  const other = await stack.newTenant();
  const theirs = (await api('GET', `/v1/query/degradation?org_id=${other.orgId}`, { token: other.owner.token })).body
    .data.events as Record<string, any>[];
  t.truthy(theirs.find((e) => e.kind === 'dead_letters'));
  t.falsy(theirs.find((e) => e.kind === 'over_quota' && e.subject === tenant.orgId));
  await db.updateTable('orgs').set({ session_limit: null }).where('id', '=', tenant.orgId).execute();
  advance(2 * 3600_000);
  await stack.monitor!.check();
  const later = await read();
  t.like(
    later.find((e) => e.kind === 'dead_letters'),
    { active: false },
  );
  t.like(
    later.find((e) => e.kind === 'over_quota'),
    { active: false },
  );
});
