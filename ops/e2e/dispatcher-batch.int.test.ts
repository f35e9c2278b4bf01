import { eventually } from '../../shared/testing/eventually.ts';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { encode } from '../../shared/contracts/codec.ts';
import { newId } from '../../shared/ids.ts';
import { apiClient, created } from '../../shared/testing/http-client.ts';
import { startTestStack } from '../testing/stack.ts';
import { startReceiver } from '../testing/webhook-receiver.ts';
import { clockedDispatcher } from '../testing/dispatcher-stack.ts';

test('batched records: deliveries of 60 events to a healthy, a failing and a gone endpoint are recorded in a few statements, each outcome exactly as one at a time would be', async (t) => {
  const { start, stack, tenant, api, publishIssues } = await clockedDispatcher(t); // no retry comes due
  const db = stack.infra.database.db;
  const rx = await startReceiver(({ path }) => ({ status: path === '/ok' ? 204 : path === '/fail' ? 500 : 410 }));
  t.teardown(() => rx.close());
  const endpoint: Record<string, string> = {};
  for (const path of ['/ok', '/fail', '/gone']) {
    const r = await api('POST', '/v1/manage/webhooks', {
      token: tenant.owner.token,
      body: { org_id: tenant.orgId, url: `${rx.url}${path}`, events: ['issue.created'] },
    });
    t.is(r.status, 201, r.text);
    endpoint[path] = r.body.data.endpoint.id;
  }
  const N = 60;
  await publishIssues('issue.created', N, 'batch');
  const deliveries = () => db.selectFrom('notification_deliveries').selectAll().execute();
  // Every notification fanned out (the healthy endpoint has all its deliveries: a fan-out queues all of an event's
  // at once; the gone endpoint gets none once it is disabled) and every delivery attempted once or given up.
  const all = await eventually(
    async () => {
      const rows = await deliveries();
      const settled = rows.every((d) => d.status !== 'pending' || d.attempts === 1);
      return rows.filter((d) => d.endpoint_id === endpoint['/ok']).length === N && settled ? rows : undefined;
    },
    { timeoutMs: 60_000, what: 'every delivery attempted once or given up' },
  );
  await stack.dispatcher!.stop(); // every outcome written
  const of = (path: string) => all.filter((d) => d.endpoint_id === endpoint[path]);
  t.deepEqual(
    ['/ok', '/fail'].map((p) => of(p).length),
    [N, N],
  );
  t.true(of('/gone').length >= 1 && of('/gone').length <= N);

  // Healthy: each event once, succeeded. (The receiver is on loopback: the log keeps status classes, issue 30 N8.)
  const okRequests = rx.received.filter((r) => r.path === '/ok');
  t.is(okRequests.length, N);
  t.is(new Set(okRequests.map((r) => r.headers['webhook-id'])).size, N);
  t.true(of('/ok').every((d) => d.status === 'succeeded' && d.attempts === 1 && d.last_http_status === 200));
  // Failing: each waits for its retry 5 s later (jitter fixed at the middle), and the endpoint's streak counts all 60.
  t.true(
    of('/fail').every(
      (d) => d.status === 'pending' && d.last_http_status === 500 && d.next_attempt_at.getTime() === start + 5000,
    ),
  );
  const failing = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', endpoint['/fail']!)
    .executeTakeFirstOrThrow();
  t.like(failing, { active: true, consecutive_failures: N });
  t.is(failing.failing_since?.getTime(), start);
  // Gone: disabled at the first 410; only the sends already under way then (32 at once) reach it, each failed for
  // good; the rest, claimed before the disabling was stored, are given up unsent.
  const goneRequests = rx.received.filter((r) => r.path === '/gone').length;
  t.true(goneRequests >= 1 && goneRequests <= 32, `${goneRequests} requests to the gone endpoint`);
  const gone = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', endpoint['/gone']!)
    .executeTakeFirstOrThrow();
  t.like(gone, { active: false, disabled_reason: 'the endpoint answered 410 Gone' });
  t.true(of('/gone').every((d) => d.status === 'failed'));
  t.is(of('/gone').filter((d) => d.attempts === 1 && d.last_http_status === 400).length, goneRequests);
  t.true(
    of('/gone')
      .filter((d) => d.attempts === 0)
      .every((d) => d.last_error === 'endpoint disabled or removed before delivery'),
  );
  const disabledEvents = await db
    .selectFrom('degradation_events')
    .selectAll()
    .where('kind', '=', 'endpoint_disabled')
    .where('subject', '=', endpoint['/gone']!)
    .execute();
  t.is(disabledEvents.length, 1);

  // The log has one row per request made, numbered 1.
  const attempts = await db.selectFrom('delivery_attempts').selectAll().execute();
  t.is(attempts.length, 2 * N + goneRequests);
  t.true(attempts.every((a) => a.attempt === 1));
  // Batched: a claim feeds up to 64 sends and a write records what finished meanwhile (one at a time took 360+).
  const { claims, recordWrites, statements, sent } = stack.dispatcher!.stats;
  t.is(sent, 2 * N + goneRequests);
  // A claim takes at most 8 deliveries per destination (the per-destination cap): 24 of these three endpoints' at most,
  // so 6 claims when every delivery is queued before the first. The fan-out runs beside the claims, and on a loaded
  // machine it queues them a few at a time (18 claims seen in a whole run): a quarter of one claim per delivery.
  t.true(claims <= all.length / 4, `${claims} claims`);
  t.true(recordWrites <= all.length / 2, `${recordWrites} record writes`);
  // A cycle is one statement for its successes and claim, plus a transaction for its failures when it has some
  // (one at a time took three statements per delivery).
  t.true(statements <= all.length / 2, `${statements} statements`);
  t.log(
    `${claims} claims, ${recordWrites} record writes, ${statements} statements for ${all.length} deliveries (${goneRequests} requests to the gone endpoint)`,
  );
});

test('a dispatcher stopping hands back what it claimed but did not send: due at once, nothing lost, nothing sent twice', async (t) => {
  const { start, stack, tenant, api, publishIssues } = await clockedDispatcher(t);
  const db = stack.infra.database.db;
  // A slow receiver: every answer waits until the test lets it go, so the dispatcher stops with sends under way.
  const held: (() => void)[] = [];
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    req.resume();
    held.push(() => res.writeHead(204).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`;
  await created(api, '/v1/manage/webhooks', tenant.owner.token, {
    org_id: tenant.orgId,
    url,
    events: ['issue.created'],
  });
  const N = 50;
  await publishIssues('issue.created', N, 'stop');
  // One endpoint holds at most 8 senders (the per-destination cap).
  await eventually(async () => requests >= 8, { timeoutMs: 30_000, what: '8 sends under way' });
  // Fanned out before the stop: fan-out is the dispatcher's too, so an event it had not fanned out would wait for
  // the next dispatcher, not be handed back (the cap of 8 senders makes the stop come early enough to see that).
  await eventually(async () => (await db.selectFrom('notification_deliveries').select('id').execute()).length === N, {
    timeoutMs: 30_000,
    what: 'every event fanned out',
  });
  const stopping = stack.dispatcher!.stop();
  while (held.length > 0) held.shift()!();
  await stopping;
  const rows = await db.selectFrom('notification_deliveries').selectAll().execute();
  const succeeded = rows.filter((d) => d.status === 'succeeded');
  t.is(succeeded.length, requests, 'each request sent is recorded');
  const rest = rows.filter((d) => d.status !== 'succeeded');
  t.true(rest.length >= N - 8 - 8, `${rest.length} not sent`);
  t.true(
    rest.every((d) => d.status === 'pending' && d.attempts === 0 && d.next_attempt_at.getTime() === start),
    'unsent deliveries are due now, not at the end of a lease',
  );
});

test('embedded default (PGlite, in-process bus): the batched claim and record statements deliver and log, failures scheduled for retry', async (t) => {
  const stack = await startTestStack({
    embedded: true,
    processor: false,
    dispatcher: true,
    random: () => 0.5,
    env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' },
  });
  t.teardown(() => stack.stop());
  const api = apiClient(stack.baseUrl);
  const { tenant } = stack;
  const rx = await startReceiver(({ path }) => ({ status: path === '/ok' ? 200 : 503 }));
  t.teardown(() => rx.close());
  for (const path of ['/ok', '/fail']) {
    await created(api, '/v1/manage/webhooks', tenant.owner.token, {
      org_id: tenant.orgId,
      url: `${rx.url}${path}`,
      events: ['issue.created'],
    });
  }
  for (let i = 0; i < 5; i++) {
    const id = `issue.created:embedded-${i}:${newId()}`;
    await stack.infra.bus.publish(
      stack.infra.topology.notifySubject('issue.created'),
      encode({ event: 'issue.created', notification_id: id, issue: { id: newId(), site_id: tenant.siteId, n: i } }),
      id,
    );
  }
  const log = await eventually(
    async () => {
      const r = await api('GET', `/v1/query/webhook-deliveries?org_id=${tenant.orgId}`, { token: tenant.owner.token });
      const attempts = (r.body.data.deliveries as Record<string, any>[]).filter((d) => !d.id.startsWith('pen_'));
      return attempts.length >= 10 ? attempts : undefined;
    },
    { timeoutMs: 60_000, what: '10 attempts logged' },
  );
  t.is(log.filter((d) => d.status === 'succeeded' && d.http_status === 200).length, 5);
  t.true(
    log
      .filter((d) => d.status === 'failed')
      .every((d) => d.http_status === 500 && typeof d.next_attempt_at === 'string'),
  );
  t.is(rx.received.filter((r) => r.path === '/ok').length, 5);
});
