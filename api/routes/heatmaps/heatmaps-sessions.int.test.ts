import test from 'ava';
import { randomUUID } from 'node:crypto';
import { type TestTenant, useStack } from '../../../ops/testing/stack.ts';
import { eventually } from '../../../shared/testing/eventually.ts';
import { getJson, postJson, request } from '../../../shared/testing/http-client.ts';
import { ingestSession, signalEvent, siteRows, type Ev } from '../../../ops/testing/session-traffic.ts';

const stack = useStack(test);

const signalRows = (siteId: string) => siteRows(stack.infra.database.db, 'signals', siteId);

/** Sends `events` through ingest in batches of 500 (the batch limit), each batch its own session. */
async function send(tenant: TestTenant, events: Ev[], device = 'desktop', sessionId?: string): Promise<void> {
  for (let i = 0; i < events.length; i += 500)
    await ingestSession(stack.baseUrl, tenant.publishableKey, events.slice(i, i + 500), {
      sessionId,
      context: { device, viewport: { w: 1000, h: 500 } },
    });
}
const signal = signalEvent;

test('element heatmap: 300 points representing the latest 800 clicking signals of the element, coordinates 0..1 from either form', async (t) => {
  const tenant = await stack.newTenant();
  const t0 = Date.now() - 3_600_000;
  const events: Ev[] = [];
  // 100 older signals at the element's left edge: outside the latest 800, so no point may sit at rx = 0.
  for (let i = 0; i < 100; i++) events.push(signal('/cart', 'rage_click', t0 + i, { selector: '#buy', x: 0, y: 0 }));
  // The latest 800: 600 rage clicks, 150 dead clicks, 50 disabled attempts (proportions 75/18.75/6.25 %).
  for (let i = 0; i < 800; i++) {
    const type = i % 16 < 12 ? 'rage_click' : i % 16 < 15 ? 'dead_click' : 'disabled_element_attempt';
    // Half in the integer form, half in the older offset-plus-size form (element 200 x 50 px).
    const coords = i % 2 === 0 ? { x: 250, y: 750 } : { offset_x: 50, offset_y: 37.5, element_w: 200, element_h: 50 };
    events.push(signal('/cart', type, t0 + 1000 + i, { selector: '#buy', ...coords }));
  }
  // Not matching: another element, and a signal type element heatmaps do not show.
  events.push(signal('/cart', 'rage_click', t0 + 5000, { selector: '#other', x: 1, y: 1 }));
  events.push(signal('/cart', 'form_restart', t0 + 5001, { selector: '#buy', x: 1, y: 1 }));
  await send(tenant, events);
  await eventually(async () => (await signalRows(tenant.siteId)) === 902, { timeoutMs: 30_000 });
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  const r = await getJson(
    `${stack.baseUrl}/v1/query/element-heatmap?site_id=${tenant.siteId}&page=/cart&selector=%23buy`,
    auth,
  );
  t.is(r.status, 200);
  const d = r.body.data;
  t.like(d, { page: '/cart', selector: '#buy', count: 800 });
  t.is(d.points.length, 300);
  t.deepEqual(Object.keys(d.points[0]).sort(), ['rx', 'ry', 'signal']);
  t.true(
    d.points.every((p: { rx: number; ry: number }) => p.rx === 0.25 && p.ry === 0.75),
    'both forms normalised to the same fraction; no older signal drawn',
  );
  const by = (s: string) => d.points.filter((p: { signal: string }) => p.signal === s).length;
  t.deepEqual(
    [by('rage_click'), by('dead_click'), by('disabled_element_attempt')],
    [225, 56, 19],
    'each type keeps its share of the 800',
  );

  const few = await getJson(
    `${stack.baseUrl}/v1/query/element-heatmap?site_id=${tenant.siteId}&page=/cart&selector=%23other`,
    auth,
  );
  t.like(few.body.data, { count: 1, points: [{ rx: 0.001, ry: 0.001, signal: 'rage_click' }] });
  for (const [q, path] of [
    ['page=/cart', 'selector'],
    ['selector=%23buy', 'page'],
    ['page=/cart&selector=', 'selector'],
  ]) {
    const bad = await getJson(`${stack.baseUrl}/v1/query/element-heatmap?site_id=${tenant.siteId}&${q}`, auth);
    t.is(bad.status, 400, q);
    t.is(bad.body.error.details[0].path, path, q);
  }
  const other = await stack.newTenant();
  t.is(
    (
      await getJson(`${stack.baseUrl}/v1/query/element-heatmap?site_id=${tenant.siteId}&page=/cart&selector=%23buy`, {
        authorization: `Bearer ${other.secretKey}`,
      })
    ).status,
    404,
  );
});

test('page heatmap: at most 500 points from 1,000+ signals over 30 days, device filter (mobile includes tablets), px/py and el only when known', async (t) => {
  const tenant = await stack.newTenant();
  const now = Date.now();
  const span = 29 * 86_400_000;
  const make = (n: number, marker: number, extra: (i: number) => Ev) =>
    Array.from({ length: n }, (_, i) =>
      signal('/shop', 'dead_click', now - span + Math.floor((i * span) / n), { vx: marker, vy: 500, ...extra(i) }),
    );
  await send(
    tenant,
    make(700, 100, () => ({ selector: '#d', px: 100, py: 900 })),
    'desktop',
  );
  await send(
    tenant,
    make(300, 200, () => ({})),
    'mobile',
  );
  // Tablets send the older form: client offsets against the viewport (1000 x 500), document offsets with its size.
  await send(
    tenant,
    make(200, 0, () => ({
      vx: undefined,
      vy: undefined,
      client_x: 300,
      client_y: 250,
      page_x: 50,
      page_y: 3000,
      document_w: 1000,
      document_h: 4000,
      selector: '#t',
    })),
    'tablet',
  );
  await eventually(async () => (await signalRows(tenant.siteId)) === 1200, { timeoutMs: 30_000 });
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  const heat = (q: string) =>
    getJson(`${stack.baseUrl}/v1/query/page-heatmap?site_id=${tenant.siteId}&page=/shop${q}`, auth);

  const allR = await heat('');
  t.is(allR.status, 200, JSON.stringify(allR.body));
  // The answer's text comes from the database (pageHeatmapAnswer): still JSON, in the envelope, with its ETag.
  t.is(allR.headers.get('content-type'), 'application/json; charset=utf-8');
  t.is(allR.text, JSON.stringify(allR.body), 'the compact form JSON.stringify writes');
  const etag = allR.headers.get('etag');
  t.regex(etag ?? '', /^W\/"/);
  const again = await request('GET', `${stack.baseUrl}/v1/query/page-heatmap?site_id=${tenant.siteId}&page=/shop`, {
    headers: { ...auth, 'if-none-match': etag! },
  });
  t.is(again.status, 304, "If-None-Match with the answer's ETag");
  const all = allR.body.data;
  t.like(all, { page: '/shop', device: null, count: 1200 });
  t.is(all.points.length, 400, 'every 3rd of 1200 (k = ceil(1200/500))');
  const desktop = (await heat('&device=desktop')).body.data;
  t.is(desktop.count, 700);
  t.is(desktop.points.length, 350);
  t.true(
    desktop.points.every(
      (p: Ev) =>
        p.vx === 0.1 && p.vy === 0.5 && p.px === 0.1 && p.py === 0.9 && p.el === '#d' && p.signal === 'dead_click',
    ),
  );
  const mobile = (await heat('&device=mobile')).body.data;
  t.is(mobile.count, 500);
  t.is(mobile.points.length, 500, 'exactly the cap');
  const phone = mobile.points.find((p: Ev) => p.vx === 0.2)!;
  t.deepEqual(Object.keys(phone).sort(), ['signal', 'vx', 'vy'], 'no px/py and no el when not sent');
  const tablet = mobile.points.find((p: Ev) => p.el === '#t')!;
  t.like(tablet, { vx: 0.3, vy: 0.5, px: 0.05, py: 0.75 });
  t.is(mobile.points.filter((p: Ev) => p.el === '#t').length, 200);

  // 1,000+ signals in one device: the cap holds at 500.
  await send(
    tenant,
    make(400, 100, () => ({ selector: '#d' })),
    'desktop',
  );
  await eventually(async () => (await signalRows(tenant.siteId)) === 1600, { timeoutMs: 30_000 });
  const busy = (await heat('&device=desktop')).body.data;
  t.is(busy.count, 1100);
  t.is(busy.points.length, 367);
  t.true((await heat('')).body.data.points.length <= 500);

  t.is((await heat('&device=tablet')).status, 400);
  const missing = await getJson(`${stack.baseUrl}/v1/query/page-heatmap?site_id=${tenant.siteId}`, auth);
  t.is(missing.status, 400);
  t.is(missing.body.error.details[0].path, 'page');
  t.deepEqual((await heat('x')).body.data, { page: '/shopx', device: null, count: 0, points: [] });
});

test('ingest refuses an older-form offset without its size, naming the missing field', async (t) => {
  const tenant = await stack.newTenant();
  const r = await postJson(
    `${stack.baseUrl}/v1/ingest`,
    {
      session_id: 's',
      sent_at: new Date().toISOString(),
      context: { device: 'desktop', viewport: { w: 1, h: 1 } },
      events: [signal('/p', 'rage_click', Date.now(), { offset_x: 3 })],
    },
    { authorization: `Bearer ${tenant.publishableKey}` },
  );
  t.is(r.status, 400);
  t.is(r.body.error.details[0].path, 'events[0].element_w');
});

test('session timeline: page views and signals in order; ses_ prefix accepted; unknown and foreign sessions 404', async (t) => {
  const tenant = await stack.newTenant();
  const t0 = Date.now() - 60_000;
  const sid = `tl-${randomUUID()}`;
  // Sent out of order, in two batches: the timeline orders by time.
  await send(
    tenant,
    [
      signal('/cart', 'dead_click', t0 + 3000, { selector: '#coupon' }),
      { id: randomUUID(), type: 'page_view', ts: new Date(t0 + 2000).toISOString(), page: '/cart' },
    ],
    'desktop',
    sid,
  );
  await send(
    tenant,
    [
      { id: randomUUID(), type: 'page_view', ts: new Date(t0).toISOString(), page: '/home' },
      signal('/home', 'rage_click', t0 + 1000, { selector: '#menu' }),
      { id: randomUUID(), type: 'conversion', ts: new Date(t0 + 4000).toISOString(), page: '/cart', value: 10 },
    ],
    'desktop',
    sid,
  );
  await eventually(async () => (await signalRows(tenant.siteId)) === 2);
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  const r = await eventually(async () => {
    const x = await getJson(`${stack.baseUrl}/v1/query/session?site_id=${tenant.siteId}&session_id=${sid}`, auth);
    return x.body.data?.events.length === 4 ? x : undefined;
  });
  const d = r.body.data;
  t.like(d, {
    session_id: `ses_${sid}`,
    page_count: 2,
    signal_count: 2,
    started_at: new Date(t0).toISOString(),
    truncated: false,
  });
  t.deepEqual(
    d.events.map((e: Ev) => [e.type, e.page, e.signal ?? null]),
    [
      ['page_view', '/home', null],
      ['signal', '/home', 'rage_click'],
      ['page_view', '/cart', null],
      ['signal', '/cart', 'dead_click'],
    ],
  );
  t.like(d.events[1], {
    selector: '#menu',
    occurred_at: new Date(t0 + 1000).toISOString(),
    timestamp: new Date(t0 + 1000).toISOString(),
  });
  t.deepEqual(
    (await getJson(`${stack.baseUrl}/v1/session?site_id=${tenant.siteId}&session_id=ses_${sid}`, auth)).body,
    r.body,
    'short form, prefixed id',
  );
  t.is((await getJson(`${stack.baseUrl}/v1/query/session?site_id=${tenant.siteId}&session_id=nope`, auth)).status, 404);
  const missing = await getJson(`${stack.baseUrl}/v1/query/session?site_id=${tenant.siteId}`, auth);
  t.is(missing.status, 400);
  t.is(missing.body.error.details[0].path, 'session_id');
  const other = await stack.newTenant();
  t.is(
    (
      await getJson(`${stack.baseUrl}/v1/query/session?site_id=${other.siteId}&session_id=${sid}`, {
        authorization: `Bearer ${other.secretKey}`,
      })
    ).status,
    404,
  );
});
