import { eventually } from '../../shared/testing/eventually.ts';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { clockedDispatcher } from '../testing/dispatcher-stack.ts';
import { startReceiver } from '../testing/webhook-receiver.ts';

/**
 * Issue 31, item 6: a webhook receiver that accepts requests and never answers holds a few of the dispatcher's
 * senders (the per-destination cap), not all 32 until their 10 s deadline: a healthy endpoint's deliveries, queued
 * after 80 to the black hole, all arrive while it holds 8 senders at most (without the cap it held all 32).
 */
test('a black-holed endpoint holds at most its share of senders; a healthy endpoint keeps receiving', async (t) => {
  const { tenant, api, publishIssues } = await clockedDispatcher(t); // no retry comes due
  let open = 0;
  let mostOpen = 0;
  const blackHole = createServer((req) => {
    open++;
    mostOpen = Math.max(mostOpen, open);
    req.resume();
    req.socket.once('close', () => open--);
  });
  await new Promise<void>((r) => blackHole.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    blackHole.closeAllConnections();
    blackHole.close();
  });
  const healthy = await startReceiver(() => ({ status: 204 }));
  t.teardown(() => healthy.close());
  for (const [url, event] of [
    [`http://127.0.0.1:${(blackHole.address() as AddressInfo).port}/never`, 'issue.created'],
    [`${healthy.url}/ok`, 'issue.updated'],
  ] as const) {
    const r = await api('POST', '/v1/manage/webhooks', {
      token: tenant.owner.token,
      body: { org_id: tenant.orgId, url, events: [event] },
    });
    t.is(r.status, 201, r.text);
  }
  await publishIssues('issue.created', 80, 'hole');
  // The black hole has its requests open (the senders it may hold are taken) before the healthy deliveries queue.
  await eventually(async () => open > 0, { timeoutMs: 30_000, what: 'the black hole holds requests' });
  await publishIssues('issue.updated', 20, 'healthy');
  await eventually(async () => healthy.received.length === 20, {
    timeoutMs: 60_000,
    what: 'every healthy delivery arrived',
  });
  // 80 sends of 10 s, 8 at a time: the black hole still holds senders while the healthy endpoint is served.
  t.true(open > 0, 'the healthy endpoint was served while the black-holed sends were waiting for their deadline');
  t.true(mostOpen <= 8, `the black hole held at most 8 senders (held ${mostOpen})`);
  t.true(mostOpen > 0);
});
