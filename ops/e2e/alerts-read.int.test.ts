import test from 'ava';
import { randomUUID } from 'node:crypto';
import { startTestStack, type TestStack } from '../testing/stack.ts';
import { getJson, postJson } from '../testing/sdk-batch.ts';

let stack: TestStack;
test.before(async () => {
  stack = await startTestStack({ processor: false });
});
test.after.always(async () => {
  await stack?.stop();
});

async function insertAlert(siteId: string, status: string, minutesAgo: number): Promise<string> {
  const id = randomUUID();
  await stack.infra.database.db.insertInto('alerts').values({
    id, site_id: siteId, rule_id: null, rule_name: 'spike on /checkout', page: '/checkout', trigger_type: 'spike', score_before: 20, score_after: 55,
    status, triggered_at: new Date(Date.now() - minutesAgo * 60_000), acknowledged_at: null, resolved_at: null, resolved_reason: null,
  }).execute();
  return id;
}

test('GET /v1/query/alerts lists a site\'s alerts newest first, filters by status, bounds limit; /v1/alerts is the short form', async (t) => {
  const tenant = await stack.newTenant();
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  const older = await insertAlert(tenant.siteId, 'fired', 30);
  const newer = await insertAlert(tenant.siteId, 'acknowledged', 5);
  const list = await getJson(`${stack.baseUrl}/v1/query/alerts?site_id=${tenant.siteId}`, auth);
  t.is(list.status, 200);
  t.deepEqual(list.body.data.alerts.map((a: { id: string }) => a.id), [newer, older]);
  t.is(list.body.data.total, 2);
  t.like(list.body.data.alerts[1], { rule_name: 'spike on /checkout', page: '/checkout', trigger_type: 'spike', score_before: 20, score_after: 55, status: 'fired' });
  const fired = await getJson(`${stack.baseUrl}/v1/query/alerts?site_id=${tenant.siteId}&status=fired`, auth);
  t.deepEqual(fired.body.data.alerts.map((a: { id: string }) => a.id), [older]);
  t.deepEqual((await getJson(`${stack.baseUrl}/v1/alerts?site_id=${tenant.siteId}`, auth)).body.data.alerts, list.body.data.alerts);
  for (const bad of ['status=open', 'limit=0', 'limit=101']) {
    const r = await getJson(`${stack.baseUrl}/v1/query/alerts?site_id=${tenant.siteId}&${bad}`, auth);
    t.is(r.status, 400, bad);
  }
  t.is((await getJson(`${stack.baseUrl}/v1/query/alerts?site_id=${tenant.siteId}&limit=100`, auth)).status, 200);
});

test('GET /v1/query/alerts/:id answers one alert; another site\'s, a random and a malformed id are the same 404', async (t) => {
  const tenant = await stack.newTenant();
  const other = await stack.newTenant();
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  const mine = await insertAlert(tenant.siteId, 'fired', 1);
  const theirs = await insertAlert(other.siteId, 'fired', 1);
  const one = await getJson(`${stack.baseUrl}/v1/query/alerts/${mine}?site_id=${tenant.siteId}`, auth);
  t.is(one.status, 200);
  t.is(one.body.data.id, mine);
  const missing = await getJson(`${stack.baseUrl}/v1/query/alerts/${randomUUID()}?site_id=${tenant.siteId}`, auth);
  t.is(missing.status, 404);
  t.deepEqual((await getJson(`${stack.baseUrl}/v1/query/alerts/${theirs}?site_id=${tenant.siteId}`, auth)).body, missing.body);
  t.deepEqual((await getJson(`${stack.baseUrl}/v1/query/alerts/not-an-id?site_id=${tenant.siteId}`, auth)).body, missing.body);
  t.is((await getJson(`${stack.baseUrl}/v1/query/alerts/${theirs}?site_id=${other.siteId}`, auth)).status, 404, 'another site id is 404 too');
  // A status change through the write API shows in the read API.
  const patched = await postJson(`${stack.baseUrl}/v1/alerts/${mine}`, { status: 'resolved', resolved_reason: 'fixed in 1.2' }, { authorization: `Bearer ${tenant.owner.token}` });
  t.is(patched.status, 200);
  t.like((await getJson(`${stack.baseUrl}/v1/query/alerts/${mine}?site_id=${tenant.siteId}`, auth)).body.data, { status: 'resolved', resolved_reason: 'fixed in 1.2' });
});
