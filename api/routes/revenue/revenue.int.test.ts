import test from 'ava';
import { randomUUID } from 'node:crypto';
import { type TestTenant, useStack } from '../../../ops/testing/stack.ts';
import { eventually } from '../../../shared/testing/eventually.ts';
import { getJson } from '../../../shared/testing/http-client.ts';
import { ingestSession, pageView, signalEvent, siteRows, type Ev } from '../../../ops/testing/session-traffic.ts';

const stack = useStack(test);

const at = (ts: number) => new Date(ts).toISOString();
const sessionsStored = (siteId: string) => siteRows(stack.infra.database.db, 'sessions', siteId);
const session = (tenant: TestTenant, events: Ev[]) =>
  ingestSession(stack.baseUrl, tenant.publishableKey, events, {
    context: { viewport: { w: 1000, h: 800 }, source: 'ads' },
  });
const view = pageView;
const rage = (ts: number): Ev =>
  signalEvent('/checkout', 'rage_click', ts, { selector: '#pay', label: 'Pay now', x: 1, y: 1 });
const purchase = (ts: number, value: number): Ev => ({
  id: randomUUID(),
  type: 'conversion',
  ts: at(ts),
  page: '/checkout',
  value,
});

/** 10 sessions meet the #pay issue (1 converts), 10 calm ones view /checkout (5 convert); every purchase is 100. */
async function traffic(tenant: TestTenant): Promise<void> {
  const t0 = Date.now() - 600_000;
  for (let i = 0; i < 10; i++) {
    const ts = t0 + i * 1000;
    await session(tenant, [
      view('/checkout', ts),
      rage(ts + 1),
      rage(ts + 2),
      rage(ts + 3),
      ...(i === 0 ? [purchase(ts + 4, 100)] : []),
    ]);
    await session(tenant, [view('/checkout', ts + 500), ...(i % 2 === 0 ? [purchase(ts + 501, 100)] : [])]);
  }
  await eventually(async () => (await sessionsStored(tenant.siteId)) === 20, { timeoutMs: 30_000 });
}

test('revenue, recommendations and insights: off with the reason until wired; then the documented method on ingested traffic', async (t) => {
  const tenant = await stack.newTenant();
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  const q = (path: string) =>
    getJson(`${stack.baseUrl}${path}${path.includes('?') ? '&' : '?'}site_id=${tenant.siteId}`, auth);

  const off = await q('/v1/query/revenue');
  t.is(off.status, 200);
  t.like(off.body.data, { site_id: tenant.siteId, enabled: false, total_at_risk: null, issues: [] });
  t.regex(off.body.data.reason, /revenue_config\.enabled/);
  const noInsights = (await q('/v1/query/insights')).body.data;
  t.like(noInsights, { enabled: false, days: 7, pages: [], sources: [], insights: [] });
  t.regex(noInsights.reason, /no conversion events in the last 7 days/);
  t.deepEqual((await q('/v1/query/recommendations')).body.data, {
    site_id: tenant.siteId,
    total: 0,
    recommendations: [],
  });

  await traffic(tenant);
  const rec = await eventually(
    async () => {
      const r = await q('/v1/query/recommendations');
      return r.body.data.recommendations.length === 1 ? r : undefined;
    },
    { timeoutMs: 30_000 },
  );
  const item = rec.body.data.recommendations[0];
  t.like(item, {
    rank: 1,
    page: '/checkout',
    element_selector: '#pay',
    label: 'Pay now',
    signal_type: 'rage_click',
    impact: { affected_sessions: 10, revenue_at_risk: null, currency: null },
  });
  t.true(item.recommendation.startsWith('On /checkout, "Pay now" (#pay): Make the element respond within 100 ms'));
  t.is(typeof item.closes.issue_id, 'string');
  t.true(item.impact.severity > 0);
  t.deepEqual((await q('/v1/recommendations')).body, rec.body);
  t.regex(
    (await q('/v1/query/revenue')).body.data.reason,
    /revenue_config\.enabled/,
    'conversions alone do not turn revenue on',
  );

  const patched = await fetch(`${stack.baseUrl}/v1/manage/sdk-config/production?site_id=${tenant.siteId}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${tenant.owner.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ revenue_config: { enabled: true, currency: 'EUR' } }),
  });
  t.is(patched.status, 200);
  const revenue = await q('/v1/query/revenue');
  const d = revenue.body.data;
  t.like(d, {
    enabled: true,
    reason: null,
    currency: 'EUR',
    conversion_event: 'conversion',
    window_days: 30,
    average_conversion_value: 100,
  });
  t.regex(d.method, /conversion rate of calm sessions/);
  // Calm 5/10 = 50 %, affected 1/10 = 10 %: 0.4 × 10 sessions × 100 = 400.
  t.like(d.issues[0], {
    issue_id: item.closes.issue_id,
    affected_sessions: 10,
    conversion_rate_affected: 0.1,
    conversion_rate_calm: 0.5,
    calm_sessions: 10,
    revenue_at_risk: 400,
  });
  t.is(d.total_at_risk, 400);
  t.deepEqual((await q('/v1/revenue')).body, revenue.body);
  t.like((await q('/v1/query/recommendations')).body.data.recommendations[0].impact, {
    revenue_at_risk: 400,
    currency: 'EUR',
  });
  t.is((await q('/v1/query/recommendations?limit=1')).body.data.recommendations.length, 1);
  t.is((await q('/v1/query/recommendations?limit=100')).status, 200);
  t.is((await q('/v1/query/recommendations?limit=0')).status, 400);
  t.is((await q('/v1/query/recommendations?limit=101')).status, 400);

  const insights = (await q('/v1/query/insights?days=1')).body.data;
  t.like(insights, { enabled: true, days: 1, conversion_event: 'conversion' });
  t.deepEqual(insights.pages, [
    {
      key: '/checkout',
      confused: 10,
      confused_converted: 1,
      calm: 10,
      calm_converted: 5,
      conversion_rate_confused: 0.1,
      conversion_rate_calm: 0.5,
    },
  ]);
  t.deepEqual(
    insights.sources.map((s: Ev) => s.key),
    ['ads'],
  );
  t.deepEqual(
    insights.insights.map((i: Ev) => [i.dimension, i.key, i.lost_conversions]),
    [
      ['page', '/checkout', 4],
      ['source', 'ads', 4],
    ],
  );
  t.regex(insights.insights[0].text, /converted at 10% against 50% for calm visitors/);
  for (const bad of ['0', '91']) t.is((await q(`/v1/query/insights?days=${bad}`)).status, 400, bad);
  t.is((await q('/v1/query/insights?days=90')).status, 200);
  const other = await stack.newTenant();
  t.is(
    (
      await getJson(`${stack.baseUrl}/v1/query/revenue?site_id=${tenant.siteId}`, {
        authorization: `Bearer ${other.secretKey}`,
      })
    ).status,
    404,
  );
});
