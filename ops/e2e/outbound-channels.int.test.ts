import test from 'ava';
import { createServer } from 'node:net';
import { encode } from '../../shared/contracts/codec.ts';
import { newId } from '../../shared/ids.ts';
import { apiClient } from '../../shared/testing/http-client.ts';
import { startTestStack } from '../testing/stack.ts';
import { startReceiver } from '../testing/webhook-receiver.ts';
import { eventually } from '../../shared/testing/eventually.ts';

/** Issue 30 N2 (Slack host confusion) and N8 (the delivery log as a probe of private networks). */

test('N2: a Slack webhook_url is accepted only as https://hooks.slack.com/services/… by parsing: // paths, user info, backslashes, encoded slashes, ports and queries are refused', async (t) => {
  const stack = await startTestStack({ processor: false });
  t.teardown(() => stack.stop());
  const api = apiClient(stack.baseUrl);
  const { tenant } = stack;
  const connect = (webhook_url: string) =>
    api('POST', '/v1/manage/integrations', {
      token: tenant.owner.token,
      body: { site_id: tenant.siteId, provider: 'slack', config: { webhook_url } },
    });
  for (const url of [
    'https://hooks.slack.com//attacker.example/services/T/B/X',
    'https://hooks.slack.com/\\attacker.example/x',
    'https://hooks.slack.com/%2F%2Fattacker.example/x',
    'https://user:pw@hooks.slack.com/services/T/B/X',
    'https://hooks.slack.com@attacker.example/services/T/B/X',
    'https://hooks.slack.com:8443/services/T/B/X',
    'https://hooks.slack.com/services/T/B/X?next=//attacker.example',
    'https://hooks.slack.com/services/../../x',
    'http://hooks.slack.com/services/T/B/X',
  ]) {
    const r = await connect(url);
    t.is(r.status, 400, `${url}: ${r.text}`);
    t.is(r.body.error.details[0].path, 'config.webhook_url', url);
  }
  t.is((await connect('https://hooks.slack.com/services/T000/B000/XXXXXXXX')).status, 201);
});

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

test('N8: with private networks allowed, the delivery log shows a tenant only the status class and a fixed reason for private targets', async (t) => {
  const stack = await startTestStack({
    processor: false,
    dispatcher: true,
    env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' },
  });
  t.teardown(() => stack.stop());
  const api = apiClient(stack.baseUrl);
  const { tenant } = stack;
  const rx = await startReceiver(() => ({ status: 503, body: 'postgres://admin:hunter2@10.0.0.5/internal is down' }));
  t.teardown(() => rx.close());
  const token = tenant.owner.token;
  for (const url of [`${rx.url}/answering`, `http://127.0.0.1:${await closedPort()}/closed`]) {
    const r = await api('POST', '/v1/manage/webhooks', {
      token,
      body: { org_id: tenant.orgId, url, events: ['issue.created'] },
    });
    t.is(r.status, 201, r.text);
  }
  const nid = `issue.created:${newId()}`;
  await stack.infra.bus.publish(
    stack.infra.topology.notifySubject('issue.created'),
    encode({ event: 'issue.created', issue: { id: newId(), site_id: tenant.siteId }, notification_id: nid }),
    nid,
  );
  const rows = await eventually(
    async () => {
      const log = await api('GET', `/v1/query/webhook-deliveries?org_id=${tenant.orgId}`, { token });
      const failed = (log.body?.data?.deliveries ?? []).filter((d: { status: string }) => d.status === 'failed');
      return failed.length >= 2
        ? (failed as Array<{ target: string; http_status: number | null; error: string }>)
        : undefined;
    },
    { timeoutMs: 30_000, what: 'two failed attempts logged' },
  );
  const answering = rows.find((r) => r.target.endsWith('/answering'))!;
  const closed = rows.find((r) => r.target.endsWith('/closed'))!;
  t.is(answering.http_status, 500, 'the status class, not the status');
  t.is(closed.http_status, null);
  t.is(answering.error, closed.error, 'an answering service and a closed port read the same');
  t.notRegex(answering.error, /hunter2|postgres|503|ECONNREFUSED/);
  t.regex(answering.error, /private-network target/);
});
