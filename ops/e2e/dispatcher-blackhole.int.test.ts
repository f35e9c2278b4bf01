import { eventually } from '../../shared/testing/eventually.ts';
import { apiClient } from '../../shared/testing/http-client.ts';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { encode } from '../../shared/contracts/codec.ts';
import { newId } from '../../shared/ids.ts';

import { startTestStack } from '../testing/stack.ts';
import { startReceiver } from '../testing/webhook-receiver.ts';

/**
 * Issue 31, item 6: a webhook receiver that accepts requests and never answers holds a few of the dispatcher's
 * senders (the per-destination cap), not all 32 until their 10 s deadline: a healthy endpoint's deliveries, queued
 * after 80 to the black hole, all arrive before the first black-holed send has even timed out.
 */
test('a black-holed endpoint holds at most its share of senders; a healthy endpoint keeps receiving', async (t) => {
  const clock = Math.floor(Date.now() / 1000) * 1000; // fixed: no retry comes due during the test
  const stack = await startTestStack({
    processor: false,
    dispatcher: true,
    now: () => clock,
    random: () => 0.5,
    env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' },
  });
  t.teardown(() => stack.stop());
  let open = 0;
  let mostOpen = 0;
  let firstEndedAt: number | undefined;
  const blackHole = createServer((req) => {
    open++;
    mostOpen = Math.max(mostOpen, open);
    req.resume();
    req.socket.once('close', () => {
      open--;
      firstEndedAt ??= performance.now();
    });
  });
  await new Promise<void>((r) => blackHole.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    blackHole.closeAllConnections();
    blackHole.close();
  });
  const healthy = await startReceiver(() => ({ status: 204 }));
  t.teardown(() => healthy.close());
  const api = apiClient(stack.baseUrl);
  const { tenant } = stack;
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
  const publish = async (event: 'issue.created' | 'issue.updated', n: number) => {
    for (let i = 0; i < n; i++) {
      const id = `${event}:hole-${i}:${newId()}`;
      await stack.infra.bus.publish(
        stack.infra.topology.notifySubject(event),
        encode({ event, notification_id: id, issue: { id: newId(), site_id: tenant.siteId, n: i } }),
        id,
      );
    }
  };
  await publish('issue.created', 80);
  // The black hole has its requests open (the senders it may hold are taken) before the healthy deliveries queue.
  await eventually(async () => open > 0, { timeoutMs: 30_000, what: 'the black hole holds requests' });
  await publish('issue.updated', 20);
  await eventually(async () => healthy.received.length === 20, { timeoutMs: 60_000, what: 'every healthy delivery arrived' });
  const healthyDoneAt = performance.now();
  t.true(
    firstEndedAt === undefined || healthyDoneAt < firstEndedAt,
    'the healthy endpoint was served while the black-holed sends were still waiting for their deadline',
  );
  t.true(mostOpen <= 8, `the black hole held at most 8 senders (held ${mostOpen})`);
  t.true(mostOpen > 0);
});
