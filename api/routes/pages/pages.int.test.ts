import test from 'ava';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { startTestStack, type TestStack, type TestTenant } from '../../../ops/testing/stack.ts';
import { sdkBatch } from '../../../ops/testing/sdk-batch.ts';
import { eventually } from '../../../shared/testing/eventually.ts';
import { getJson, postJson } from '../../../shared/testing/http-client.ts';
import { insertAlertRow } from '../../../ops/testing/alert-row.ts';

let stack: TestStack;
/** The processor's clock runs this far behind: score_history is dated by the processor's day, not the event's. */
let clockBehindMs = 0;
let seeded: TestTenant;
test.before(async () => {
  stack = await startTestStack({ now: () => Date.now() - clockBehindMs });
  seeded = await seededTenant();
});
test.after.always(async () => {
  await stack?.stop();
});

const DAY = 86_400_000;
const ingest = (tenant: TestTenant, body: unknown) =>
  postJson(`${stack.baseUrl}/v1/ingest`, body, { authorization: `Bearer ${tenant.publishableKey}` });
const days = async (siteId: string, page: string) =>
  Number(
    (
      await sql<{
        n: number;
      }>`select count(*)::int as n from score_history where site_id = ${siteId} and page = ${page}`.execute(
        stack.infra.database.db,
      )
    ).rows[0].n,
  );

/** Traffic on /checkout (rage clicks) today, 2 days ago and 20 days ago, and calm traffic on /home today. */
async function seededTenant(): Promise<TestTenant> {
  const tenant = await stack.newTenant();
  let n = 0;
  for (const ago of [20, 2, 0]) {
    clockBehindMs = ago * DAY;
    const r = await ingest(
      tenant,
      sdkBatch({ page: '/checkout', events: 5, ts: Date.now() - ago * DAY - 60_000, sentAt: Date.now() }),
    );
    if (r.status !== 202) throw new Error(`ingest ${r.status}`);
    n++;
    await eventually(async () => (await days(tenant.siteId, '/checkout')) === n);
  }
  await ingest(tenant, sdkBatch({ page: '/home', events: 1 }));
  await eventually(async () => (await days(tenant.siteId, '/home')) === 1);
  return tenant;
}

test('GET /v1/query/page answers score, trend, 30 days of history, issues, elements, budget, deploys and active alerts; /v1/page is the same', async (t) => {
  const tenant = seeded;
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  const rule = await postJson(
    `${stack.baseUrl}/v1/manage/alert-rules`,
    { site_id: tenant.siteId, trigger_type: 'budget', threshold: 1, page_pattern: '/check*' },
    { authorization: `Bearer ${tenant.owner.token}` },
  );
  t.is(rule.status, 201);
  const alertId = randomUUID();
  await insertAlertRow(stack.infra.database.db, tenant.siteId, {
    id: alertId,
    rule_name: 'budget',
    trigger_type: 'budget',
    score_before: 0,
    score_after: 50,
    status: 'fired',
  });
  await insertAlertRow(stack.infra.database.db, tenant.siteId, {
    rule_name: 'old',
    score_before: 0,
    score_after: 50,
    status: 'resolved',
    resolved_at: new Date(),
    resolved_reason: 'fixed',
  });
  const page = await eventually(async () => {
    const r = await getJson(`${stack.baseUrl}/v1/query/page?site_id=${tenant.siteId}&page=/checkout`, auth);
    return r.body.data?.elements.length > 0 ? r : undefined;
  });
  t.is(page.status, 200);
  const d = page.body.data;
  t.is(d.page, '/checkout');
  t.true(d.score > 0);
  t.true(['up', 'down', 'stable'].includes(d.trend));
  t.is(d.dominant_signal, 'rage_click');
  t.is(d.score_history.length, 3, 'three days with traffic inside 30 days');
  t.deepEqual(
    d.score_history.map((h: { date: string }) => h.date),
    [...d.score_history.map((h: { date: string }) => h.date)].sort(),
    'oldest first',
  );
  t.deepEqual(Object.keys(d.score_history[0]).sort(), ['date', 'score']);
  t.like(d.elements[0], { selector: '#pay', label: 'Pay now' });
  t.is(d.elements[0].signals.rage_click, 8, 'elements count the last 7 days');
  t.is(typeof d.elements[0].friction_score, 'number');
  t.true(Array.isArray(d.issues));
  t.deepEqual(d.budget, { limit: 1, current: d.score, exceeded: d.score > 1 });
  t.deepEqual(d.deploys, [], 'no deploy recorded yet');
  t.deepEqual(
    d.alerts.map((a: { id: string }) => a.id),
    [alertId],
    'resolved alerts are not active',
  );
  t.deepEqual(
    (await getJson(`${stack.baseUrl}/v1/page?site_id=${tenant.siteId}&page=/checkout`, auth)).body,
    page.body,
  );

  const recorded = await postJson(
    `${stack.baseUrl}/v1/deploys`,
    { site_id: tenant.siteId, version: 'v-page-1' },
    { authorization: `Bearer ${tenant.owner.token}` },
  );
  t.is(recorded.status, 201);
  const withDeploy = (await getJson(`${stack.baseUrl}/v1/query/page?site_id=${tenant.siteId}&page=/checkout`, auth))
    .body.data;
  t.deepEqual(
    withDeploy.deploys,
    [
      (await getJson(`${stack.baseUrl}/v1/query/deploys/${recorded.body.data.id}?site_id=${tenant.siteId}`, auth)).body
        .data,
    ],
    'the page lists the recorded deploy as the deploy routes present it',
  );

  const home = (await getJson(`${stack.baseUrl}/v1/query/page?site_id=${tenant.siteId}&page=/home`, auth)).body.data;
  t.deepEqual(home.budget, { limit: null, current: home.score, exceeded: false }, 'no budget rule matches /home');

  const missing = await getJson(`${stack.baseUrl}/v1/query/page?site_id=${tenant.siteId}`, auth);
  t.is(missing.status, 400);
  t.is(missing.body.error.details[0].path, 'page');
  t.is((await getJson(`${stack.baseUrl}/v1/query/page?site_id=${tenant.siteId}&page=/never`, auth)).status, 404);
  const other = await stack.newTenant();
  t.is(
    (
      await getJson(`${stack.baseUrl}/v1/query/page?site_id=${tenant.siteId}&page=/checkout`, {
        authorization: `Bearer ${other.secretKey}`,
      })
    ).status,
    404,
  );
  t.is((await getJson(`${stack.baseUrl}/v1/query/page?site_id=${other.siteId}&page=/checkout`, auth)).status, 404);
});

test('GET /v1/query/trends: days 1-90 (default 7), page or the whole site; history and data in both forms', async (t) => {
  const tenant = seeded;
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  const trends = (path: string, q: string) => getJson(`${stack.baseUrl}${path}?site_id=${tenant.siteId}${q}`, auth);
  const week = await trends('/v1/query/trends', '&page=/checkout');
  t.is(week.status, 200);
  t.like(week.body.data, { page: '/checkout', days: 7 });
  t.is(week.body.data.history.length, 2, 'today and 2 days ago; 20 days ago is outside the default 7');
  t.deepEqual(week.body.data.data, week.body.data.history);
  t.is((await trends('/v1/query/trends', '&page=/checkout&days=30')).body.data.history.length, 3);
  t.is((await trends('/v1/query/trends', '&page=/checkout&days=1')).body.data.history.length, 1);
  t.is((await trends('/v1/query/trends', '&page=/checkout&days=90')).status, 200);
  for (const bad of ['0', '91', '1.5', 'x']) {
    const r = await trends('/v1/query/trends', `&days=${bad}`);
    t.is(r.status, 400, bad);
    t.is(r.body.error.details[0].path, 'days');
  }
  const site = await trends('/v1/trends', '&days=30');
  t.is(site.body.data.page, null);
  t.is(site.body.data.data.length, 3);
  t.deepEqual(site.body.data.history, site.body.data.data);
  t.deepEqual((await trends('/v1/trends', '&page=/checkout')).body, week.body, 'short form, same shape');
  t.is((await trends('/v1/query/trends', '&page=/never')).status, 404);
});

test('GET /v1/query/compare puts two pages side by side with their difference; both pages required', async (t) => {
  const tenant = seeded;
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  const r = await getJson(`${stack.baseUrl}/v1/query/compare?site_id=${tenant.siteId}&a=/checkout&b=/home`, auth);
  t.is(r.status, 200);
  const d = r.body.data;
  t.like(d.a, { page: '/checkout', dominant_signal: 'rage_click', sessions: 2 });
  t.deepEqual(d.a.signals, { rage_click: 8 });
  t.like(d.b, { page: '/home', sessions: 1, open_issues: 0 });
  t.deepEqual(d.b.signals, {});
  t.deepEqual(d.difference.signals, { rage_click: -8 });
  t.is(d.difference.sessions, -1);
  t.is(d.difference.score, Math.round((d.b.score - d.a.score) * 10) / 10);
  t.is(d.higher_friction, 'a');
  t.deepEqual(
    (await getJson(`${stack.baseUrl}/v1/compare?site_id=${tenant.siteId}&a=/checkout&b=/home`, auth)).body,
    r.body,
  );
  for (const [q, path] of [
    ['&a=/checkout', 'b'],
    ['&b=/home', 'a'],
  ]) {
    const bad = await getJson(`${stack.baseUrl}/v1/query/compare?site_id=${tenant.siteId}${q}`, auth);
    t.is(bad.status, 400);
    t.is(bad.body.error.details[0].path, path);
  }
  t.is(
    (await getJson(`${stack.baseUrl}/v1/query/compare?site_id=${tenant.siteId}&a=/checkout&b=/nope`, auth)).status,
    404,
  );
});
