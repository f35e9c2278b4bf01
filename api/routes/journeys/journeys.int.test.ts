import test from 'ava';
import { randomUUID } from 'node:crypto';
import { type TestTenant, useStack } from '../../../ops/testing/stack.ts';
import { eventually } from '../../../shared/testing/eventually.ts';
import { assertRejected, getJson } from '../../../shared/testing/http-client.ts';
import { ingestSession, pageView, signalEvent, siteRows, type Ev } from '../../../ops/testing/session-traffic.ts';

const stack = useStack(test);

const sessionsStored = (siteId: string) => siteRows(stack.infra.database.db, 'sessions', siteId);
const at = (ts: number) => new Date(ts).toISOString();
const view = pageView;
const sig = (page: string, ts: number, signal: string, extra: Ev = {}): Ev =>
  signalEvent(page, signal, ts, { selector: '#x', ...extra });
const session = (tenant: TestTenant, id: string, events: Ev[]) =>
  ingestSession(stack.baseUrl, tenant.publishableKey, events, {
    sessionId: id,
    context: { viewport: { w: 1000, h: 800 } },
  });

test('journeys/friction: the four rules, 100-edge and 5-example caps, weight filter, signal_type, limit of sessions; bounds', async (t) => {
  const tenant = await stack.newTenant();
  const t0 = Date.now() - 3_600_000;
  // 120 sessions /pN → /end, each with one rage click of confidence 0.1 on /pN: 120 edges of weight 1.0.
  for (let i = 0; i < 120; i++)
    await session(tenant, `p-${i}`, [
      view(`/p${i}`, t0 + i * 10),
      sig(`/p${i}`, t0 + i * 10 + 1, 'rage_click', { meta: { confidence: 0.1 } }),
      view('/end', t0 + i * 10 + 2),
    ]);
  // A reload with an error before it: /r → /r weighs 8 (error_encounter, confidence 1).
  await session(tenant, 'reload', [
    view('/r', t0 + 5000),
    sig('/r', t0 + 5001, 'error_encounter'),
    view('/r', t0 + 5002),
  ]);
  // The heaviest and most recent: 7 rage clicks on /hot, then /end; a dead click (not an edge decorator) weighs nothing.
  const hot = [view('/hot', t0 + 6000)];
  for (let i = 1; i <= 7; i++) hot.push(sig('/hot', t0 + 6000 + i, 'rage_click'));
  hot.push(sig('/hot', t0 + 6010, 'dead_click'), view('/end', t0 + 6020));
  await session(tenant, 'hot', hot);
  await eventually(async () => (await sessionsStored(tenant.siteId)) === 122, { timeoutMs: 30_000 });
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  const journeys = (q = '') =>
    getJson(`${stack.baseUrl}/v1/query/journeys/friction?site_id=${tenant.siteId}${q}`, auth);

  const all = await journeys();
  t.is(all.status, 200);
  const d = all.body.data;
  t.like(d, { site_id: tenant.siteId, limit: 250, min_friction_weight: 1, signal_type: null, sessions_analyzed: 122 });
  t.is(d.edges.length, 100, '122 edges qualify, capped at 100');
  t.like(d.edges[0], { from: '/hot', to: '/end', sessions: 1, friction_weight: 70, signals: { rage_click: 7 } });
  t.is(d.edges[0].examples.length, 5);
  t.like(d.edges[0].examples[0], {
    session_id: 'ses_hot',
    page: '/hot',
    signal_type: 'rage_click',
    element_selector: '#x',
    occurred_at: at(t0 + 6001),
  });
  t.like(d.edges[1], { from: '/r', to: '/r', friction_weight: 8, sessions: 1, signals: { error_encounter: 1 } });
  t.like(d.edges[2], { to: '/end', friction_weight: 1, sessions: 1 });

  t.deepEqual(
    (await journeys('&min_friction_weight=9')).body.data.edges.map((e: Ev) => e.from),
    ['/hot'],
    'weight filter before sorting',
  );
  t.is((await journeys('&min_friction_weight=8')).body.data.edges.length, 2, 'an edge equal to the minimum stays');
  t.is((await journeys('&min_friction_weight=0')).body.data.edges.length, 100);
  t.deepEqual((await journeys('&min_friction_weight=1000')).body.data.edges, []);
  t.deepEqual(
    (await journeys('&signal_type=error_encounter')).body.data.edges.map((e: Ev) => e.from),
    ['/r'],
  );
  const one = (await journeys('&limit=1')).body.data;
  t.is(one.sessions_analyzed, 1, 'limit is the number of sessions analysed: the most recent');
  t.deepEqual(
    one.edges.map((e: Ev) => e.from),
    ['/hot'],
  );
  t.is((await journeys('&limit=1000')).status, 200);
  await assertRejected(t, journeys, [
    ['&limit=0', 'limit'],
    ['&limit=1001', 'limit'],
    ['&min_friction_weight=-1', 'min_friction_weight'],
    ['&min_friction_weight=1001', 'min_friction_weight'],
    ['&signal_type=dead_click', 'signal_type'],
  ]);
  const other = await stack.newTenant();
  t.is(
    (
      await getJson(`${stack.baseUrl}/v1/query/journeys/friction?site_id=${tenant.siteId}`, {
        authorization: `Bearer ${other.secretKey}`,
      })
    ).status,
    404,
  );
});

test('flows: navigation edges with sessions and transitions, pages with entries and exits; /v1/flows is the same', async (t) => {
  const tenant = await stack.newTenant();
  const t0 = Date.now() - 600_000;
  await session(tenant, 'a', [view('/home', t0), view('/cart', t0 + 1), view('/checkout', t0 + 2)]);
  await session(tenant, 'b', [view('/home', t0 + 10), view('/cart', t0 + 11)]);
  await session(tenant, 'c', [view('/home', t0 + 20), view('/home', t0 + 21)]);
  await eventually(async () => (await sessionsStored(tenant.siteId)) === 3);
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  const r = await eventually(async () => {
    const x = await getJson(`${stack.baseUrl}/v1/query/flows?site_id=${tenant.siteId}`, auth);
    return x.body.data?.sessions_analyzed === 3 ? x : undefined;
  });
  const d = r.body.data;
  t.like(d, { site_id: tenant.siteId, window_days: 7, max_sessions: 1000 });
  t.deepEqual(d.edges, [
    { from: '/home', to: '/cart', sessions: 2, transitions: 2 },
    { from: '/cart', to: '/checkout', sessions: 1, transitions: 1 },
    { from: '/home', to: '/home', sessions: 1, transitions: 1 },
  ]);
  t.deepEqual(d.pages, [
    { page: '/home', views: 4, entries: 3, exits: 1 },
    { page: '/cart', views: 2, entries: 0, exits: 1 },
    { page: '/checkout', views: 1, entries: 0, exits: 1 },
  ]);
  t.deepEqual((await getJson(`${stack.baseUrl}/v1/flows?site_id=${tenant.siteId}`, auth)).body, r.body);
  const other = await stack.newTenant();
  t.is((await getJson(`${stack.baseUrl}/v1/query/flows?site_id=${other.siteId}`, auth)).status, 404);
});

test('hostile query text on the new read routes: NUL, overlong, repeated and empty parameters are 400s naming the field, never 500', async (t) => {
  const tenant = await stack.newTenant();
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  const long = 'x'.repeat(2049);
  const cases: [string, string][] = [
    ['/v1/query/page?page=%2Fa%00b', 'page'],
    ['/v1/page?page=' + long, 'page'],
    ['/v1/query/page?page=%2Fa&page=%2Fb', 'page'],
    ['/v1/query/trends?page=%00', 'page'],
    ['/v1/query/trends?days=', 'days'],
    ['/v1/query/compare?a=%2Fa&b=%00', 'b'],
    ['/v1/query/session?session_id=%00', 'session_id'],
    ['/v1/session?session_id=', 'session_id'],
    ['/v1/query/element-heatmap?page=%2Fa&selector=%23a%00', 'selector'],
    ['/v1/query/page-heatmap?page=%2Fa%00', 'page'],
    ['/v1/query/page-heatmap?page=%2Fa&device=Mobile', 'device'],
    ['/v1/query/journeys/friction?limit=1e9', 'limit'],
    ['/v1/query/insights?days=-1', 'days'],
    ['/v1/query/export/events.csv?from=%00', 'from'],
  ];
  for (const [path, field] of cases) {
    const r = await getJson(`${stack.baseUrl}${path}&site_id=${tenant.siteId}`, auth);
    t.is(r.status, 400, path);
    t.is(r.body?.error?.details?.[0]?.path, field, path);
  }
});

test("every new read route answers another site's id exactly like a random one: 404", async (t) => {
  const tenant = await stack.newTenant();
  const other = await stack.newTenant();
  const routes = [
    '/v1/query/page?page=/a',
    '/v1/page?page=/a',
    '/v1/query/trends?',
    '/v1/trends?',
    '/v1/query/compare?a=/a&b=/b',
    '/v1/compare?a=/a&b=/b',
    '/v1/query/session?session_id=s',
    '/v1/session?session_id=s',
    '/v1/query/element-heatmap?page=/a&selector=%23a',
    '/v1/query/page-heatmap?page=/a',
    '/v1/query/flows?',
    '/v1/flows?',
    '/v1/query/journeys/friction?',
    '/v1/query/recommendations?',
    '/v1/recommendations?',
    '/v1/query/revenue?',
    '/v1/revenue?',
    '/v1/query/insights?',
    '/v1/query/export/events.csv?',
    '/v1/export/events.csv?',
  ];
  for (const route of routes) {
    const sep = route.endsWith('?') ? '' : '&';
    const foreign = await getJson(`${stack.baseUrl}${route}${sep}site_id=${other.siteId}`, {
      authorization: `Bearer ${tenant.secretKey}`,
    });
    const random = await getJson(`${stack.baseUrl}${route}${sep}site_id=${randomUUID()}`, {
      authorization: `Bearer ${tenant.secretKey}`,
    });
    t.is(foreign.status, 404, route);
    t.deepEqual(foreign.body, random.body, route);
  }
});
