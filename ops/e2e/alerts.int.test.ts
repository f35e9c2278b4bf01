import test from 'ava';
import { SMTPServer } from 'smtp-server';
import { Webhook } from 'standardwebhooks';
import type { AddressInfo } from 'node:net';
import { apiClient, created } from '../../shared/testing/http-client.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { checkoutBudgetRule } from '../testing/alert-routing.ts';
import { postJson } from '../../shared/testing/http-client.ts';
import { startTestStack } from '../testing/stack.ts';
import { startReceiver } from '../testing/webhook-receiver.ts';
import { eventually } from '../../shared/testing/eventually.ts';

async function startSmtp(): Promise<{ port: number; mails: { to: string[]; raw: string }[]; close(): Promise<void> }> {
  const mails: { to: string[]; raw: string }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, cb) {
      let raw = '';
      stream.on('data', (c: Buffer) => (raw += c.toString('utf8')));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw });
        cb();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.server.address() as AddressInfo).port,
    mails,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

test('a page over its budget fires an alert within seconds, delivered signed to the webhook, to Slack (Block Kit), PagerDuty (trigger/acknowledge/resolve, one dedup_key) and by email to owners; PATCH notifies', async (t) => {
  const webhook = await startReceiver(() => ({ status: 200 }));
  const slack = await startReceiver(() => ({ status: 200, body: 'ok' }));
  const pd = await startReceiver(() => ({ status: 202, body: '{"status":"success"}' }));
  const smtp = await startSmtp();
  const stack = await startTestStack({
    dispatcher: true,
    env: {
      OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
      SLACK_WEBHOOK_BASE_URL: slack.url,
      PAGERDUTY_EVENTS_URL: `${pd.url}/v2/enqueue`,
      SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
      PUBLIC_BASE_URL: 'https://friction.example',
    },
  });
  t.teardown(async () => {
    await stack.stop();
    await Promise.all([webhook.close(), slack.close(), pd.close(), smtp.close()]);
  });
  const api = apiClient(stack.baseUrl);
  const { tenant } = stack;
  const token = tenant.owner.token;
  const hook = await api('POST', '/v1/manage/webhooks', {
    token,
    body: {
      org_id: tenant.orgId,
      url: `${webhook.url}/in`,
      events: ['alert.triggered', 'alert.acknowledged', 'alert.resolved'],
    },
  });
  t.is(hook.status, 201, hook.text);
  await created(api, '/v1/manage/integrations', token, {
    site_id: tenant.siteId,
    provider: 'slack',
    config: { webhook_url: 'https://hooks.slack.com/services/T000/B000/XXXX' },
  });
  await checkoutBudgetRule(api, tenant, ['webhook', 'slack', 'pagerduty', 'email'], {
    config: { page_pattern: '/checkout*' },
    slack_channel: '#alerts',
  });
  // A page outside the pattern stays quiet.
  await postJson(`${stack.baseUrl}/v1/ingest`, sdkBatch({ page: '/blog', events: 6 }), {
    authorization: `Bearer ${tenant.publishableKey}`,
  });
  const sent = Date.now();
  const r = await postJson(`${stack.baseUrl}/v1/ingest`, sdkBatch({ page: '/checkout/pay', events: 6 }), {
    authorization: `Bearer ${tenant.publishableKey}`,
  });
  t.is(r.status, 202);

  const alerts = await eventually(
    async () => {
      const res = await api('GET', `/v1/query/alerts?site_id=${tenant.siteId}`, { token });
      return res.body?.data?.alerts?.length ? res.body.data.alerts : undefined;
    },
    { timeoutMs: 20_000, what: 'alert stored' },
  );
  t.is(alerts.length, 1);
  const alert = alerts[0];
  t.like(alert, { rule_name: 'Checkout budget', trigger_type: 'budget', page: '/checkout/pay', status: 'fired' });
  t.true(alert.score_after > 0);
  t.true(Date.now() - sent < 15_000, 'stored within seconds');

  const [fired] = await webhook.waitFor(1);
  const wh = new Webhook(hook.body.data.signing_secret);
  const ev = wh.verify(fired!.body, fired!.headers as Record<string, string>) as Record<string, any>;
  t.like(ev, {
    type: 'alert.triggered',
    site_id: tenant.siteId,
    data: { alert: { id: alert.id, rule_name: 'Checkout budget', trigger_type: 'budget', page: '/checkout/pay' } },
  });

  const [sl] = await slack.waitFor(1);
  t.is(sl!.path, '/services/T000/B000/XXXX');
  const msg = JSON.parse(sl!.body);
  t.is(msg.channel, '#alerts');
  t.regex(msg.text, /Checkout budget \(budget\) fired on \/checkout\/pay/);
  t.true(msg.blocks.some((b: { type: string }) => b.type === 'section'));
  t.true(JSON.stringify(msg.blocks).includes(`https://friction.example/v1/query/alerts/${alert.id}`));

  const [trig] = await pd.waitFor(1);
  const pdTrig = JSON.parse(trig!.body);
  t.like(pdTrig, {
    routing_key: 'R'.repeat(32),
    event_action: 'trigger',
    dedup_key: `friction-alert-${alert.id}`,
    payload: { severity: 'error' },
  });

  await eventually(async () => smtp.mails.length >= 1, { timeoutMs: 20_000, what: 'email' });
  t.deepEqual(smtp.mails[0]!.to, [tenant.owner.email]);
  t.regex(smtp.mails[0]!.raw, /^Subject: /m);
  t.regex(smtp.mails[0]!.raw, /Checkout budget \(budget\) fired on \/checkout\/pay/);

  t.is((await api('PATCH', `/v1/manage/alerts/${alert.id}`, { token, body: { status: 'acknowledged' } })).status, 200);
  await pd.waitFor(2);
  t.like(JSON.parse(pd.received[1]!.body), { event_action: 'acknowledge', dedup_key: `friction-alert-${alert.id}` });
  t.is(
    (
      await api('PATCH', `/v1/manage/alerts/${alert.id}`, {
        token,
        body: { status: 'resolved', resolved_reason: 'fixed the button' },
      })
    ).status,
    200,
  );
  await pd.waitFor(3);
  t.like(JSON.parse(pd.received[2]!.body), { event_action: 'resolve', dedup_key: `friction-alert-${alert.id}` });
  await webhook.waitFor(3);
  const kinds = webhook.received.map(
    (x) => (wh.verify(x.body, x.headers as Record<string, string>) as { type: string }).type,
  );
  t.deepEqual(kinds, ['alert.triggered', 'alert.acknowledged', 'alert.resolved']);
  t.like(
    (wh.verify(webhook.received[2]!.body, webhook.received[2]!.headers as Record<string, string>) as any).data.alert,
    { status: 'resolved', resolved_reason: 'fixed the button' },
  );

  // Every channel attempt is in the delivery log.
  // Three events (triggered, acknowledged, resolved) on four channels: twelve deliveries, each one attempt that succeeded.
  const log = await eventually(
    async () => {
      const l = await api('GET', `/v1/query/webhook-deliveries?org_id=${tenant.orgId}`, { token });
      return l.body.data.deliveries.filter((d: { status: string }) => d.status === 'succeeded').length === 12
        ? l
        : undefined;
    },
    { timeoutMs: 30_000, what: 'twelve deliveries' },
  );
  t.is(log.body.data.deliveries.length, 12);
  const channels = new Set(log.body.data.deliveries.map((d: { channel: string }) => d.channel));
  t.deepEqual([...channels].sort(), ['email', 'pagerduty', 'slack', 'webhook']);
  t.true(log.body.data.deliveries.every((d: { status: string }) => d.status === 'succeeded'));
  t.false(JSON.stringify(log.body).includes('R'.repeat(32)), 'no routing key in the log');
});

test('a cleared condition resolves the alert 15 minutes later with "condition cleared" and notifies; a disabled rule fires nothing', async (t) => {
  let clock = Date.now();
  const webhook = await startReceiver(() => ({ status: 200 }));
  const stack = await startTestStack({
    dispatcher: true,
    now: () => clock,
    env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' },
  });
  t.teardown(async () => {
    await stack.stop();
    await webhook.close();
  });
  const api = apiClient(stack.baseUrl);
  const { tenant } = stack;
  const token = tenant.owner.token;
  await api('POST', '/v1/manage/webhooks', {
    token,
    body: { org_id: tenant.orgId, url: webhook.url, events: ['alert.triggered', 'alert.resolved'] },
  });
  const rule = await api('POST', '/v1/manage/alert-rules', {
    token,
    body: { site_id: tenant.siteId, name: 'Budget', trigger_type: 'budget', threshold: 0, channels: ['webhook'] },
  });
  const quiet = await api('POST', '/v1/manage/alert-rules', {
    token,
    body: {
      site_id: tenant.siteId,
      name: 'Off',
      trigger_type: 'budget',
      threshold: 0,
      channels: ['webhook'],
      enabled: false,
    },
  });
  t.is(quiet.status, 201, quiet.text);
  await postJson(`${stack.baseUrl}/v1/ingest`, sdkBatch({ page: '/cart', events: 6, ts: clock }), {
    authorization: `Bearer ${tenant.publishableKey}`,
  });
  const alert = await eventually(
    async () => (await api('GET', `/v1/query/alerts?site_id=${tenant.siteId}`, { token })).body.data.alerts[0],
    { timeoutMs: 20_000, what: 'alert' },
  );
  t.is(alert.rule_name, 'Budget');
  // Its notification is sent and recorded before the clock moves: a jump past the claim lease while the attempt is in
  // flight would (rightly) send it again, with the same webhook-id.
  await webhook.waitFor(1);
  await eventually(
    async () => {
      const l = await api('GET', `/v1/query/webhook-deliveries?org_id=${tenant.orgId}`, { token });
      return l.body.data.deliveries.some((d: { status: string }) => d.status === 'succeeded') || undefined;
    },
    { timeoutMs: 20_000, what: 'the triggered notification recorded' },
  );
  // The budget is raised above the score: the condition clears. Not resolved before 15 minutes have passed...
  t.is(
    (await api('PATCH', `/v1/manage/alert-rules/${rule.body.data.id}`, { token, body: { threshold: 1000 } })).status,
    200,
  );
  await stack.tick();
  clock += 14 * 60_000;
  await stack.tick();
  t.is(
    (await api('GET', `/v1/query/alerts/${alert.id}?site_id=${tenant.siteId}`, { token })).body.data.status,
    'fired',
  );
  // ...and resolved once they have.
  clock += 2 * 60_000;
  await stack.tick();
  const resolved = (await api('GET', `/v1/query/alerts/${alert.id}?site_id=${tenant.siteId}`, { token })).body.data;
  t.like(resolved, { status: 'resolved', resolved_reason: 'condition cleared' });
  await webhook.waitFor(2);
  t.deepEqual(
    webhook.received.map((r) => JSON.parse(r.body).type),
    ['alert.triggered', 'alert.resolved'],
  );
  const all = (await api('GET', `/v1/query/alerts?site_id=${tenant.siteId}`, { token })).body.data.alerts;
  t.is(all.length, 1, 'the disabled rule fired nothing');
  // The evaluation memory is stored per (rule, page); a held-back rule says so in its record.
  const state = await stack.infra.database.db
    .selectFrom('alert_rule_states')
    .selectAll()
    .where('rule_id', '=', rule.body.data.id)
    .executeTakeFirstOrThrow();
  t.is(state.page, '/cart');
  // Clear before its first evaluation (a quiet pair has no row), then held once, then clear.
  t.true(state.recent.length >= 4 && state.recent.startsWith('01'), state.recent);
  await stack.infra.database.db
    .updateTable('alert_rule_states')
    .set({
      held_back_since: new Date(clock),
      held_back_reason: 'held back: the condition changed 4 times in the last 9 evaluations',
    })
    .where('rule_id', '=', rule.body.data.id)
    .execute();
  const listed = (
    await api('GET', `/v1/manage/alert-rules?site_id=${tenant.siteId}`, { token })
  ).body.data.alert_rules.find((r: { id: string }) => r.id === rule.body.data.id);
  t.deepEqual(listed.held_back, [
    {
      page: '/cart',
      since: new Date(clock).toISOString(),
      reason: 'held back: the condition changed 4 times in the last 9 evaluations',
    },
  ]);
});
