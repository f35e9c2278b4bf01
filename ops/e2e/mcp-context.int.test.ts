import test from 'ava';
import { randomUUID } from 'node:crypto';
import { type TestTenant, useStack } from '../testing/stack.ts';
import { getJson } from '../../shared/testing/http-client.ts';
import { CONTEXT_BUDGET_BYTES } from '../../api/routes/context/context.schema.ts';
import { insertAlertRow } from '../testing/alert-row.ts';
import { insertIssueRow, insertPageScoreRow } from '../testing/rows.ts';

const GUIDE_LIMIT = 6;
const stack = useStack(test, {
  processor: false,
  env: { GUIDE_RATE_LIMIT_PER_MIN: String(GUIDE_LIMIT), MCP_ALLOWED_ORIGINS: '' },
});

const bearer = (k: string) => ({ authorization: `Bearer ${k}` });

/** 12 scored pages, 12 active issues and a resolved one, 7 deploys, 6 active alerts and a resolved one. */
async function seedLists(tenant: TestTenant): Promise<void> {
  const db = stack.infra.database.db;
  const now = new Date();
  for (let i = 0; i < 12; i++) {
    const page = `/page-${i}`;
    await insertPageScoreRow(db, tenant.siteId, {
      page,
      score: 10 + i,
      sessions: 10,
      dominant_signal: 'dead_click',
      trend: 'up',
    });
    await insertIssueRow(db, tenant.siteId, {
      page,
      selector: `#b${i}`,
      title: `Dead clicks on button ${i}`,
      affected_sessions: 3 + i,
      severity: 20 + i,
      status: i === 0 ? 'regressed' : 'open',
    });
  }
  await insertIssueRow(db, tenant.siteId, {
    page: '/page-0',
    selector: '#gone',
    signal_type: 'rage_click',
    title: 'Resolved one',
    affected_sessions: 99,
    severity: 99,
    status: 'resolved',
    resolved_at: now,
  });
  for (let i = 0; i < 7; i++) {
    await db
      .insertInto('deploys')
      .values({
        id: randomUUID(),
        site_id: tenant.siteId,
        environment: 'production',
        version: `1.0.${i}`,
        commit_sha: null,
        url: null,
        description: null,
        confusion_before: 20,
        recorded_at: new Date(now.getTime() - (7 - i) * 60_000),
        idempotency_key: null,
        created_by: 'test',
      })
      .execute();
  }
  const rule = await db
    .insertInto('alert_rules')
    .values({
      id: randomUUID(),
      site_id: tenant.siteId,
      name: 'r',
      trigger_type: 'spike',
      threshold: 20,
      cooldown_minutes: 60,
      channels: ['mcp', 'email'],
      page_pattern: null,
      slack_channel: null,
      enabled: true,
      last_fired_at: null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  for (let i = 0; i < 7; i++) {
    await insertAlertRow(db, tenant.siteId, {
      rule_id: i < 3 ? rule.id : null,
      rule_name: `r${i}`,
      page: `/page-${i}`,
      score_before: 10,
      score_after: 40,
      details: '{}',
      triggered_at: new Date(now.getTime() - i * 60_000),
      resolved_at: i === 6 ? now : null,
      ...(i === 6 ? { status: 'resolved' } : i === 1 ? { status: 'acknowledged' } : {}),
    });
  }
}

test('the context answers its documented shape: each list capped with its total and truncated, worst first, within the size budget; short form alike', async (t) => {
  const tenant = await stack.newTenant();
  await seedLists(tenant);
  const r = await getJson(`${stack.baseUrl}/v1/query/mcp/context?site_id=${tenant.siteId}`, bearer(tenant.secretKey));
  t.is(r.status, 200, JSON.stringify(r.body));
  const c = r.body.data;
  t.like(c, { site_id: tenant.siteId, environment: 'production', overall_trend: 'stable' });
  t.like(c.pages, { total: 12, truncated: true });
  t.deepEqual(
    c.pages.items.map((p: any) => p.page),
    Array.from({ length: 10 }, (_, i) => `/page-${11 - i}`),
    'worst score first',
  );
  t.like(c.issues, { total: 12, truncated: true });
  t.is(c.issues.items.length, 10);
  t.is(c.issues.items[0].title, 'Dead clicks on button 11', 'most severe first; resolved issues left out');
  t.true(
    c.issues.items.some((i: any) => i.status === 'regressed') === false,
    'the regressed one has the lowest severity and is cut',
  );
  t.like(c.deploys, { total: 7, truncated: true });
  t.deepEqual(
    c.deploys.items.map((d: any) => d.version),
    ['1.0.6', '1.0.5', '1.0.4', '1.0.3', '1.0.2'],
  );
  t.like(c.deploys.items[0], { confusion_before: 20, confusion_after: null, delta: null, verdict: 'WARN' });
  t.like(c.alerts, { total: 6, truncated: true });
  t.deepEqual(
    c.alerts.items.map((a: any) => [a.rule_name, a.status, a.mcp_channel]),
    [
      ['r0', 'fired', true],
      ['r1', 'acknowledged', true],
      ['r2', 'fired', true],
      ['r3', 'fired', false],
      ['r4', 'fired', false],
    ],
  );
  t.like(c.recommendations, { total: 12, truncated: true });
  t.is(c.recommendations.items.length, 5);
  t.true(Buffer.byteLength(JSON.stringify(c)) <= CONTEXT_BUDGET_BYTES);
  const short = await getJson(`${stack.baseUrl}/v1/mcp/context?site_id=${tenant.siteId}`, bearer(tenant.secretKey));
  t.deepEqual({ ...short.body.data, generated_at: null }, { ...c, generated_at: null });
  const staging = await getJson(
    `${stack.baseUrl}/v1/query/mcp/context?site_id=${tenant.siteId}&environment=staging`,
    bearer(tenant.secretKey),
  );
  t.like(staging.body.data, {
    environment: 'staging',
    pages: { total: 0, truncated: false },
    alerts: { items: [], total: 0 },
    deploys: { total: 0 },
  });
});

test("credentials and tenancy: 401 without a key, 404 for another tenant's site (as for a random one), 400 for a malformed site_id", async (t) => {
  const tenant = await stack.newTenant();
  const other = await stack.newTenant();
  t.is((await getJson(`${stack.baseUrl}/v1/query/mcp/context?site_id=${tenant.siteId}`)).status, 401);
  const foreign = await getJson(
    `${stack.baseUrl}/v1/query/mcp/context?site_id=${other.siteId}`,
    bearer(tenant.secretKey),
  );
  const random = await getJson(
    `${stack.baseUrl}/v1/query/mcp/context?site_id=${randomUUID()}`,
    bearer(tenant.secretKey),
  );
  t.is(foreign.status, 404);
  t.deepEqual(foreign.body, random.body);
  const bad = await getJson(`${stack.baseUrl}/v1/query/mcp/context?site_id=nope`, bearer(tenant.secretKey));
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'invalid_input');
  t.is(
    (await getJson(`${stack.baseUrl}/v1/query/mcp/context?site_id=${tenant.siteId}`, bearer(tenant.publishableKey)))
      .status,
    403,
  );
});

test('guide surface limit: GUIDE_RATE_LIMIT_PER_MIN per site across the context routes and POST /v1/mcp, then 429 with Retry-After; another site keeps its own budget', async (t) => {
  const tenant = await stack.newTenant();
  const other = await stack.newTenant();
  const url = (p: string, s: string) => `${stack.baseUrl}${p}?site_id=${s}`;
  for (let i = 0; i < GUIDE_LIMIT - 1; i++)
    t.is(
      (await getJson(url(i % 2 ? '/v1/mcp/context' : '/v1/query/mcp/context', tenant.siteId), bearer(tenant.secretKey)))
        .status,
      200,
      `request ${i + 1}`,
    );
  const mcp = {
    method: 'POST',
    headers: {
      ...bearer(tenant.secretKey),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  };
  t.is(
    (await fetch(`${stack.baseUrl}/v1/mcp`, mcp)).status,
    200,
    `request ${GUIDE_LIMIT}: MCP counts on the same surface`,
  );
  const over = await getJson(url('/v1/query/mcp/context', tenant.siteId), bearer(tenant.secretKey));
  t.is(over.status, 429);
  t.is(over.body.error.code, 'rate_limited');
  t.true(Number(over.headers.get('retry-after')) >= 1);
  t.is((await fetch(`${stack.baseUrl}/v1/mcp`, mcp)).status, 429);
  t.is((await getJson(url('/v1/query/mcp/context', other.siteId), bearer(other.secretKey))).status, 200);
  // The read API's own limit is separate: the site's other reads still answer.
  t.is((await getJson(url('/v1/query/deploys', tenant.siteId), bearer(tenant.secretKey))).status, 200);
});
