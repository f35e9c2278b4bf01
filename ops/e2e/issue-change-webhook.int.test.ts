/**
 * Issue 31, item 4: every issue change reaches subscribers. A person's PATCH used to queue a COMMANDS row that no
 * role consumed, so webhooks never heard of it; it now goes through the same outbox → NOTIFY → dispatcher path as
 * the processor's changes. Real dispatcher, a real receiver on 127.0.0.1, on the real services and embedded.
 */
import test from 'ava';
import { startTestStack } from '../testing/stack.ts';
import { tenantFixtures } from '../testing/manage-fixtures.ts';
import { apiClient } from '../../shared/testing/http-client.ts';
import { startReceiver } from '../testing/webhook-receiver.ts';

for (const embedded of [false, true]) {
  test(`${embedded ? 'embedded' : 'real services'}: a PATCH of an issue is delivered to a webhook subscribed to issue.updated, with its changes and who made them`, async (t) => {
    const stack = await startTestStack({
      embedded,
      dispatcher: true,
      env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' },
    });
    t.teardown(() => stack.stop());
    const rx = await startReceiver(() => ({ status: 200 }));
    t.teardown(() => rx.close());
    const { tenant } = stack;
    const api = apiClient(stack.baseUrl);
    const created = await api('POST', '/v1/manage/webhooks', {
      token: tenant.owner.token,
      body: { org_id: tenant.orgId, url: `${rx.url}/hooks`, events: ['issue.updated'] },
    });
    t.is(created.status, 201, created.text);
    const id = await tenantFixtures(stack, tenant).issueId();

    t.is(
      (
        await api('PATCH', `/v1/manage/issues/${id}`, {
          token: tenant.owner.token,
          body: { status: 'in_progress', assigned_to: 'dana' },
        })
      ).status,
      200,
    );
    t.is(
      (await api('POST', `/v1/issues/${id}`, { token: tenant.owner.token, body: { status: 'resolved' } })).status,
      200,
    );
    const got = await rx.waitFor(2, 30_000);
    const bodies = got.map((r) => JSON.parse(r.body));
    t.deepEqual(
      bodies.map((b) => b.type),
      ['issue.updated', 'issue.updated'],
    );
    t.deepEqual(
      bodies.map((b) => b.data.issue.id),
      [id, id],
    );
    t.deepEqual(
      bodies.map((b) => b.data.issue.status),
      ['in_progress', 'resolved'],
      'in the order they were made',
    );
    t.deepEqual(bodies[0].data.changes, {
      status: { from: 'open', to: 'in_progress' },
      assigned_to: { from: null, to: 'dana' },
    });
    t.is(bodies[0].data.actor, tenant.owner.email);
    t.is(bodies[0].site_id, tenant.siteId);
  });
}
