/**
 * Remote SDK config (issue 12, item 1) and the latency a site owner sees (item 2), end to end: the whole stack on
 * one port serves the SDK and GET /v1/sdk-config; the fixture site loads the SDK from it in headless Chromium; the
 * config is changed with PATCH /v1/manage/sdk-config/production and the next visitor's SDK must follow it.
 */
import test from 'ava';
import type { BrowserContext, Page } from 'playwright-core';
import { useChromium } from '../../ingest/sdk/testing/browser.ts';
import { sdkCookie, useFixtures } from '../../ingest/sdk/testing/fixture-server.ts';
import { Visitor } from '../../ingest/sdk/testing/visitor.ts';
import { seeded } from '../../shared/seeded-random.ts';
import type { IngestBatch } from '../../shared/contracts/ingest.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson, postJson } from '../../shared/testing/http-client.ts';
import { type TestTenant } from '../testing/stack.ts';
import { useStack } from '../testing/stack.ts';

const stack = useStack(test);
const browser = useChromium(test);
const fixtures = useFixtures(test);

const RAGE = { times: 4, gap: [70, 200] as [number, number], wobble: 4 };

async function patchConfig(tenant: TestTenant, body: Record<string, unknown>): Promise<void> {
  const r = await fetch(`${stack.baseUrl}/v1/manage/sdk-config/production?site_id=${tenant.siteId}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${tenant.secretKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (r.status !== 200) throw new Error(`PATCH sdk-config: ${r.status} ${await r.text()}`);
}

interface Visit {
  context: BrowserContext;
  page: Page;
  v: Visitor;
  /** Every batch the SDK posted, as sent. */
  batches: IngestBatch[];
  configAnswers: number[];
}

/** A fresh browser (its own HTTP cache) on the fixture site, with the snippet a site pastes: no data-endpoint. */
async function visit(tenant: TestTenant, seed: number, config: Record<string, unknown> = {}): Promise<Visit> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const src = `${stack.baseUrl}/v1/sdk.js?v=${fixtures.sdk.version}`;
  await context.addCookies([
    { name: 'friction', value: sdkCookie({ key: tenant.publishableKey, src, config }), url: fixtures.url },
  ]);
  const batches: IngestBatch[] = [];
  const configAnswers: number[] = [];
  context.on('request', (r) => {
    if (r.method() === 'POST' && r.url() === `${stack.baseUrl}/v1/ingest`)
      batches.push(r.postDataJSON() as IngestBatch);
  });
  context.on('response', (r) => {
    if (r.url().startsWith(`${stack.baseUrl}/v1/sdk-config?`)) configAnswers.push(r.status());
  });
  const page = await context.newPage();
  const v = new Visitor(page, fixtures.url, seeded(seed));
  await v.goto('/shop.html');
  await page.waitForFunction(() => 'Friction' in window);
  return { context, page, v, batches, configAnswers };
}

const stats = (page: Page) =>
  page.evaluate(() =>
    (
      window as unknown as {
        Friction: { stats(): { sampled: boolean; queued: number; inflight: boolean; pending: number } };
      }
    ).Friction.stats(),
  );

/** Waits until the SDK has nothing pending, queued or in flight, asking it to flush what is queued. */
async function drain(page: Page): Promise<void> {
  await page.waitForFunction(
    () => {
      const F = (
        window as unknown as {
          Friction: { stats(): { pending: number; queued: number; inflight: boolean }; flush(): void };
        }
      ).Friction;
      const s = F.stats();
      if (!s.pending && s.queued && !s.inflight) F.flush();
      return !s.pending && !s.queued && !s.inflight;
    },
    undefined,
    { timeout: 20_000, polling: 100 },
  );
}

const signalsOf = (batches: IngestBatch[]) => batches.flatMap((b) => b.events.filter((e) => e.type === 'signal'));

test('GET /v1/sdk-config: public, cacheable, with an ETag; keyed by the publishable key', async (t) => {
  const tenant = await stack.newTenant();
  const url = `${stack.baseUrl}/v1/sdk-config?key=${tenant.publishableKey}`;
  const first = await fetch(url, { headers: { origin: 'https://shop.example' } });
  t.is(first.status, 200);
  t.deepEqual(await first.json(), {
    data: { environment: 'production', sample_rate: 1, ignore_selectors: [], segment: { app_version: null } },
    error: null,
  });
  t.is(first.headers.get('cache-control'), 'public, max-age=60');
  t.is(first.headers.get('access-control-allow-origin'), '*', 'any site may read it');
  const etag = first.headers.get('etag')!;
  t.regex(etag, /^"[\w-]{22}"$/);
  const again = await fetch(url, { headers: { 'if-none-match': etag } });
  t.is(again.status, 304);
  t.is(again.headers.get('etag'), etag);
  t.is((await fetch(`${url}&environment=`)).status, 200, 'an empty environment is production');

  await patchConfig(tenant, {
    sample_rate: 0.25,
    ignore_selectors: ['#pay'],
    segment: { app_version: '1.2.3' },
    revenue_config: { enabled: true },
  });
  const changed = await fetch(url, { headers: { 'if-none-match': etag } });
  t.is(changed.status, 200, "a change is visible at once (the API tells ingest's cache), with a new ETag");
  t.not(changed.headers.get('etag'), etag);
  t.deepEqual(
    (await changed.json()).data,
    { environment: 'production', sample_rate: 0.25, ignore_selectors: ['#pay'], segment: { app_version: '1.2.3' } },
    'revenue settings stay server-side',
  );
  const staging = await getJson(`${url}&environment=staging`);
  t.like(
    staging.body.data,
    { environment: 'staging', sample_rate: 1 },
    'an environment never configured has the defaults',
  );

  t.is((await getJson(`${stack.baseUrl}/v1/sdk-config?key=svc_pub_unknownunknownunknownunknown12`)).status, 401);
  t.is(
    (await getJson(`${stack.baseUrl}/v1/sdk-config?key=${tenant.secretKey}`)).status,
    403,
    'a secret key is not a browser key',
  );
  const bad = await getJson(`${url}&environment=Bad%20Env`);
  t.is(bad.status, 400);
  t.is(bad.body.error.details[0].path, 'environment');
  t.is((await getJson(`${stack.baseUrl}/v1/sdk-config`)).status, 400, 'the key is required');
});

test('ingest drops signals on ignored selectors from SDKs that loaded an older config, and tags app_version', async (t) => {
  const tenant = await stack.newTenant();
  await patchConfig(tenant, { ignore_selectors: ['#pay'], segment: { app_version: '7.0.0' } });
  const now = Date.now();
  const ev = (id: string, selector: string, type = 'signal') => ({
    id,
    type,
    ts: now,
    page: '/checkout',
    ...(type === 'signal' ? { signal: 'rage_click', selector } : {}),
  });
  const ids = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
  const body = {
    session_id: crypto.randomUUID(),
    sent_at: now,
    context: { device: 'desktop', viewport: { w: 1280, h: 800 } },
    events: [ev(ids[0], '#pay'), ev(ids[1], '#pay > span'), ev(ids[2], '#other'), ev(ids[3], '', 'page_view')],
  };
  const r = await postJson(`${stack.baseUrl}/v1/ingest`, body, { authorization: `Bearer ${tenant.publishableKey}` });
  t.is(r.status, 202);
  t.deepEqual(r.body.data, { accepted: 2, duplicates: 0 }, 'the two signals under #pay are not accepted');
  const db = stack.infra.database.db;
  const rows = await eventually(async () => {
    const got = await db
      .selectFrom('events')
      .select(['id', 'app_version'])
      .where('site_id', '=', tenant.siteId)
      .execute();
    return got.length === 2 && got;
  });
  t.deepEqual(rows.map((x) => x.id).sort(), [ids[2], ids[3]].sort());
  t.true(
    rows.every((x) => x.app_version === '7.0.0'),
    'segment.app_version tags a batch that names no version',
  );

  const only = await postJson(
    `${stack.baseUrl}/v1/ingest`,
    { ...body, events: [ev(crypto.randomUUID(), '#pay')] },
    { authorization: `Bearer ${tenant.publishableKey}` },
  );
  t.is(only.status, 202);
  t.deepEqual(only.body.data, { accepted: 0, duplicates: 0 });
});

test('Chromium: the SDK follows the config changed with PATCH /v1/manage/sdk-config/production', async (t) => {
  const tenant = await stack.newTenant();

  // Before: the hammered button is reported.
  const before = await visit(tenant, 1);
  try {
    await before.v.click('#wishlist', RAGE);
    await drain(before.page);
    t.deepEqual(before.configAnswers, [200], 'the SDK loaded its config once, at start');
    t.true(
      signalsOf(before.batches).some((e) => e.selector === '#wishlist' && e.signal === 'rage_click'),
      'rage on #wishlist reported',
    );
  } finally {
    await before.context.close();
  }

  // Ignored: the SDK no longer reports the element (checked against the DOM, so its descendants too).
  await patchConfig(tenant, { ignore_selectors: ['#wishlist'] });
  const ignored = await visit(tenant, 2);
  try {
    await ignored.v.click('#wishlist', RAGE);
    await ignored.v.click('img', RAGE);
    await drain(ignored.page);
    const sent = signalsOf(ignored.batches);
    t.false(
      sent.some((e) => e.selector === '#wishlist'),
      `nothing on #wishlist sent (sent: ${sent.map((e) => `${e.signal} ${e.selector}`).join(', ')})`,
    );
    t.true(
      sent.some((e) => e.signal === 'rage_click' && e.selector === 'img'),
      'other elements still reported',
    );
    t.true(
      ignored.batches.length > 0 && ignored.batches.every((b) => b.context.app_version === undefined),
      'no app_version configured: none sent',
    );
  } finally {
    await ignored.context.close();
  }

  // Sampled out: the session records nothing at all.
  await patchConfig(tenant, { sample_rate: 0 });
  const off = await visit(tenant, 3);
  try {
    await off.v.click('img', RAGE);
    await off.page.waitForTimeout(2500);
    await drain(off.page);
    t.false((await stats(off.page)).sampled, 'stats() says the session is out of the sample');
    t.deepEqual(off.batches, [], 'not one batch posted');
  } finally {
    await off.context.close();
  }

  // Back on, with an app version for the sessions: the service stores it on what this SDK sends.
  await patchConfig(tenant, { sample_rate: 1, segment: { app_version: '2026.11.23' } });
  const on = await visit(tenant, 4);
  try {
    await drain(on.page);
    const ids = on.batches.flatMap((b) => b.events.map((e) => e.id));
    t.true(ids.length > 0);
    const db = stack.infra.database.db;
    const rows = await eventually(async () => {
      const got = await db
        .selectFrom('events')
        .select(['app_version'])
        .where('site_id', '=', tenant.siteId)
        .where('id', 'in', ids)
        .execute();
      return got.length === ids.length && got;
    });
    t.true(rows.every((r) => r.app_version === '2026.11.23'));
  } finally {
    await on.context.close();
  }
});

test('Chromium: a rage click is visible in the API within seconds (default flush interval); the SDK sends a signal within 1 s', async (t) => {
  const tenant = await stack.newTenant();
  const VISITS = 8;
  const delays: number[] = [];
  const queued: number[] = [];
  for (let i = 0; i < VISITS; i++) {
    const vis = await visit(tenant, 100 + i);
    try {
      await vis.v.click('#wishlist', RAGE);
      const lastClick = Date.now();
      const sid = await vis.page.evaluate(
        () => (JSON.parse(sessionStorage.getItem('friction.session') || '{}') as { i?: string }).i,
      );
      // Visible = the signal row is answered by the read API (GET /v1/query/raw?table=signals).
      await eventually(
        async () => {
          const r = await getJson(`${stack.baseUrl}/v1/query/raw?site_id=${tenant.siteId}&table=signals&limit=500`, {
            authorization: `Bearer ${tenant.secretKey}`,
          });
          const rows = (r.body.data?.rows ?? []) as { signal_type: string; session_id: string }[];
          return rows.some((x) => x.signal_type === 'rage_click' && x.session_id === sid);
        },
        { timeoutMs: 60_000, stepMs: 50 },
      );
      delays.push(Date.now() - lastClick);
      // The SDK's own share, on the browser's clock: the batch's sent_at minus the signal's ts (time in the queue).
      // The browser reports its requests to the test over CDP, which can lag behind the API's answer on a busy machine.
      const batch = await eventually(
        async () => vis.batches.find((b) => b.events.some((e) => e.type === 'signal' && e.signal === 'rage_click')),
        { timeoutMs: 10_000, stepMs: 50 },
      );
      const signal = batch.events.find((e) => e.type === 'signal' && e.signal === 'rage_click')!;
      queued.push(Number(batch.sent_at) - Number(signal.ts));
    } finally {
      await vis.context.close();
    }
  }
  const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.ceil(q * xs.length) - 1];
  t.log(
    `click-to-visible ms (last click of the burst to the signal in the API): ${delays.join(', ')}; p50 ${p(delays, 0.5)}, p95 ${p(delays, 0.95)} (target 3000; the burst closes 1 s after its last click)`,
  );
  t.log(`signal queued in the SDK ms: ${queued.join(', ')}`);
  // What the SDK decides is asserted; the end-to-end figure depends on the machine's load (2 cores shared by
  // every test process) and is logged against its 3 s target rather than failing a busy run.
  t.true(
    p(queued, 0.95) <= 1500,
    `a batch holding a signal leaves within 1 s (+ timer slack): p95 ${p(queued, 0.95)} ms`,
  );
  t.true(queued.every((q) => q >= 0));
});
