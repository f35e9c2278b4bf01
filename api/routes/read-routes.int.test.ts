import test from 'ava';
import { randomUUID } from 'node:crypto';
import { useStack } from '../../ops/testing/stack.ts';
import { assertRejected, assertSameNotFound, getJson, postJson } from '../../shared/testing/http-client.ts';
import { insertAlertRow } from '../../ops/testing/alert-row.ts';

const stack = useStack(test, { processor: false });

async function insertAlert(siteId: string, status: string, minutesAgo: number): Promise<string> {
  return insertAlertRow(stack.infra.database.db, siteId, {
    status,
    triggered_at: new Date(Date.now() - minutesAgo * 60_000),
  });
}

/** A new tenant with its read headers (its secret key), beside another tenant whose site holds one fired alert. */
async function beside() {
  const tenant = await stack.newTenant();
  const other = await stack.newTenant();
  const theirs = await insertAlert(other.siteId, 'fired', 1);
  return { tenant, other, theirs, auth: { authorization: `Bearer ${tenant.secretKey}` } };
}

test("GET /v1/query/alerts lists a site's alerts newest first, filters by status, bounds limit; /v1/alerts is the short form", async (t) => {
  const tenant = await stack.newTenant();
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  const older = await insertAlert(tenant.siteId, 'fired', 30);
  const newer = await insertAlert(tenant.siteId, 'acknowledged', 5);
  const list = await getJson(`${stack.baseUrl}/v1/query/alerts?site_id=${tenant.siteId}`, auth);
  t.is(list.status, 200);
  t.deepEqual(
    list.body.data.alerts.map((a: { id: string }) => a.id),
    [newer, older],
  );
  t.is(list.body.data.total, 2);
  t.like(list.body.data.alerts[1], {
    rule_name: 'spike on /checkout',
    page: '/checkout',
    trigger_type: 'spike',
    score_before: 20,
    score_after: 55,
    status: 'fired',
  });
  const fired = await getJson(`${stack.baseUrl}/v1/query/alerts?site_id=${tenant.siteId}&status=fired`, auth);
  t.deepEqual(
    fired.body.data.alerts.map((a: { id: string }) => a.id),
    [older],
  );
  for (const word of ['open', 'active']) {
    t.deepEqual(
      (await getJson(`${stack.baseUrl}/v1/alerts?site_id=${tenant.siteId}&status=${word}`, auth)).body,
      fired.body,
      `status=${word} is fired`,
    );
  }
  t.deepEqual(
    (await getJson(`${stack.baseUrl}/v1/alerts?site_id=${tenant.siteId}`, auth)).body.data.alerts,
    list.body.data.alerts,
  );
  for (const bad of ['status=opened', 'status=FIRED', 'limit=0', 'limit=101']) {
    const r = await getJson(`${stack.baseUrl}/v1/query/alerts?site_id=${tenant.siteId}&${bad}`, auth);
    t.is(r.status, 400, bad);
  }
  t.is((await getJson(`${stack.baseUrl}/v1/query/alerts?site_id=${tenant.siteId}&limit=100`, auth)).status, 200);
});

test("GET /v1/query/alerts/:id answers one alert; another site's, a random and a malformed id are the same 404", async (t) => {
  const { tenant, other, theirs, auth } = await beside();
  const mine = await insertAlert(tenant.siteId, 'fired', 1);
  const one = await getJson(`${stack.baseUrl}/v1/query/alerts/${mine}?site_id=${tenant.siteId}`, auth);
  t.is(one.status, 200);
  t.is(one.body.data.id, mine);
  const alert = (id: string) => `${stack.baseUrl}/v1/query/alerts/${id}?site_id=${tenant.siteId}`;
  await assertSameNotFound(t, auth, alert(randomUUID()), [alert(theirs), alert('not-an-id')]);
  t.is(
    (await getJson(`${stack.baseUrl}/v1/query/alerts/${theirs}?site_id=${other.siteId}`, auth)).status,
    404,
    'another site id is 404 too',
  );
  // A status change through the write API shows in the read API.
  const patched = await postJson(
    `${stack.baseUrl}/v1/alerts/${mine}`,
    { status: 'resolved', resolved_reason: 'fixed in 1.2' },
    { authorization: `Bearer ${tenant.owner.token}` },
  );
  t.is(patched.status, 200);
  t.like((await getJson(`${stack.baseUrl}/v1/query/alerts/${mine}?site_id=${tenant.siteId}`, auth)).body.data, {
    status: 'resolved',
    resolved_reason: 'fixed in 1.2',
  });
});

test("GET /v1/query/raw answers a site's rows of one table, newest first by default, sorted by any of its columns; bounds hold", async (t) => {
  const { tenant, other, auth } = await beside();
  const first = await insertAlert(tenant.siteId, 'fired', 30);
  const second = await insertAlert(tenant.siteId, 'resolved', 5);
  const raw = (q: string) => getJson(`${stack.baseUrl}/v1/query/raw?site_id=${tenant.siteId}&${q}`, auth);
  const newest = await raw('table=alerts');
  t.is(newest.status, 200);
  t.like(newest.body.data, {
    site_id: tenant.siteId,
    table: 'alerts',
    sort: 'triggered_at',
    order: 'desc',
    limit: 100,
  });
  t.deepEqual(
    newest.body.data.rows.map((r: { id: string }) => r.id),
    [second, first],
    "only this site's rows",
  );
  t.deepEqual(
    (await raw('table=alerts&sort=status&order=asc')).body.data.rows.map((r: { status: string }) => r.status),
    ['fired', 'resolved'],
  );
  t.is((await raw('table=alerts&limit=1')).body.data.rows.length, 1);
  t.is((await raw('table=events&limit=500')).status, 200);
  t.deepEqual((await raw('table=events')).body.data.rows, []);
  await assertRejected(t, raw, [
    ['table=nope', 'table'],
    ['', 'table'],
    ['table=alerts&limit=0', 'limit'],
    ['table=alerts&limit=501', 'limit'],
    ['table=alerts&order=up', 'order'],
    ['table=alerts&sort=password', 'sort'],
    ['table=alerts&sort=id;drop', 'sort'],
  ]);
  t.deepEqual(
    (await getJson(`${stack.baseUrl}/v1/raw?site_id=${tenant.siteId}&table=alerts`, auth)).body,
    newest.body,
    'short form',
  );
  t.is((await getJson(`${stack.baseUrl}/v1/query/raw?site_id=${other.siteId}&table=alerts`, auth)).status, 404);
});

test('GET /v1/query/elements ranks elements by friction signal count, friction score breaking ties', async (t) => {
  const tenant = await stack.newTenant();
  const now = new Date();
  const element = (selector: string, signalCount: number, frictionScore: number) => ({
    site_id: tenant.siteId,
    page: '/checkout',
    cluster_selector: selector,
    selector,
    label: null,
    signals: JSON.stringify({ dead_click: signalCount }),
    signal_count: signalCount,
    friction_score: frictionScore,
    dominant_signal: 'dead_click',
    affected_users: 1,
    recommendation: null,
    last_signal_at: now,
    updated_at: now,
  });
  await stack.infra.database.db
    .insertInto('page_elements')
    .values([element('#few-but-severe', 3, 80), element('#many', 10, 20), element('#many-worse', 10, 30)])
    .execute();
  const r = await getJson(`${stack.baseUrl}/v1/query/elements?site_id=${tenant.siteId}`, {
    authorization: `Bearer ${tenant.secretKey}`,
  });
  t.deepEqual(
    r.body.data.elements.map((e: { selector: string }) => e.selector),
    ['#many-worse', '#many', '#few-but-severe'],
  );
});
