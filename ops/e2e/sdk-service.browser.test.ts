/**
 * Phase 2 of the browser SDK's end-to-end tests (issue 5, item 6): the running service, not a stand-in.
 * The whole stack (ingest, processor, api on one port; real PostgreSQL, NATS, Redis) serves the SDK at
 * GET /v1/sdk.js; the fixture site on 127.0.0.1 loads it from there with the tenant's publishable key and
 * no data-endpoint (so, like a site's snippet, it posts to the origin it was loaded from); scripted visitors
 * in headless Chromium go through known friction and known non-friction. Then the service must show the
 * broken elements as issues, and nothing else, with their signal rows carrying the coordinates of the
 * clicks the visitors actually made.
 *
 * Phase 1 (ingest/sdk/detection.browser.test.ts) checks every scenario's detection against a capture server;
 * this one checks the path from a real page to an issue, so it runs a handful of scenarios, each by
 * enough visitors to open an issue if it produced a signal.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import test from 'ava';
import type { BrowserContext, Request } from 'playwright-core';
import { SCENARIOS, SITE_CONFIG, type Scenario } from '../../ingest/sdk/fixtures/scenarios.ts';
import { useChromium } from '../../ingest/sdk/testing/browser.ts';
import { coordinateProblem, describeExpected, describeSignals, judge } from '../../ingest/sdk/testing/expect.ts';
import { sdkCookie, useFixtures } from '../../ingest/sdk/testing/fixture-server.ts';
import { settle, type SentEvent } from '../../ingest/sdk/testing/run-visit.ts';
import { Visitor, type ClickRecord } from '../../ingest/sdk/testing/visitor.ts';
import { seeded } from '../../shared/seeded-random.ts';
import type { IngestBatch } from '../../shared/contracts/ingest.ts';
import { MIN_ISSUE_SESSIONS, MIN_ISSUE_SIGNALS } from '../../processor/engine/clustering.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson } from '../../shared/testing/http-client.ts';
import { useStack } from '../testing/stack.ts';

const scenario = (name: string): Scenario => {
  const s = SCENARIOS.find((x) => x.name === name);
  if (!s) throw new Error(`no scenario "${name}" in ingest/sdk/fixtures/scenarios.ts`);
  return s;
};

/** The button that does nothing (hammered: rage_click + dead_click) and the disabled submit. */
const FRICTION = ['rage on a button that does nothing', 'disabled submit'].map(scenario);
/** The issue's non-friction list (text selection, stepper, toggle, new tab, backdrop), pagination, and opted-out dead controls. */
const NON_FRICTION = [
  'double-click to select a word',
  'triple-click to select a paragraph',
  'quantity stepper clicked fast',
  'toggle switched on and off',
  'pagination clicked fast',
  'link that opens a new tab',
  'modal closed by its backdrop',
  'static modal backdrop clicked, then closed',
  'dead controls the site opted out',
].map(scenario);
/** Every visitor runs every scenario, each from a fresh load of its start page, in one tab (one session). */
const PLAN = [...NON_FRICTION, ...FRICTION];
/**
 * Visitors (sessions). Each friction signal then comes from VISITORS sessions, VISITORS times: just enough to
 * open an issue (≥ 5 signals from ≥ 3 sessions). A non-friction case that wrongly produced one signal per visit
 * would open an issue just the same, so "no other issue" is a real check, not one the threshold makes true.
 * They run all at once, a browser context each: on a 2-core machine that still keeps every timing window honest.
 */
const VISITORS = 5;

const key = (page: string, signal: string, selector: string | null | undefined): string =>
  `${page} ${signal} ${selector ?? '(none)'}`;

/** The issues the friction scenarios must open, with how many signals each must have. */
const EXPECTED_ISSUES = new Map<string, number>();
for (const s of FRICTION)
  for (const x of s.expected)
    EXPECTED_ISSUES.set(
      key(x.page, x.signal, x.selector),
      (EXPECTED_ISSUES.get(key(x.page, x.signal, x.selector)) ?? 0) + VISITORS,
    );

const stack = useStack(test);
const browser = useChromium(test);
const fixtures = useFixtures(test);

/** A GET with the raw (possibly compressed) body: fetch would decode it and hide what was sent. */
function rawGet(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

test('GET /v1/sdk.js and /v1/sdk.mjs serve the build, cached by version, compressed, cross-origin', async (t) => {
  const js = `${stack.baseUrl}/v1/sdk.js`;
  // The service's build is this checkout's build: the same bytes, whatever process made them.
  const plain = await rawGet(js, { 'accept-encoding': 'identity' });
  t.is(plain.status, 200);
  t.is(plain.headers['content-type'], 'text/javascript; charset=utf-8');
  t.is(plain.body.toString('utf8'), fixtures.sdk.iife);
  t.is(plain.headers.etag, `"${fixtures.sdk.version}"`, 'a strong ETag from the build version');
  t.is(plain.headers['cache-control'], 'public, max-age=300', 'an unversioned tag picks up a new build within minutes');
  t.is(plain.headers['access-control-allow-origin'], '*');
  t.is(plain.headers['content-encoding'], undefined);

  const pinned = await rawGet(`${js}?v=${fixtures.sdk.version}`, { 'accept-encoding': 'identity' });
  t.is(
    pinned.headers['cache-control'],
    'public, max-age=31536000, immutable',
    'the versioned URL can only ever mean these bytes',
  );
  t.is(pinned.body.toString('utf8'), fixtures.sdk.iife);
  const stale = await rawGet(`${js}?v=0.0.1-00000000`, { 'accept-encoding': 'identity' });
  t.is(stale.headers['cache-control'], 'public, max-age=300', "another version is not pinned to this build's bytes");

  const revalidated = await rawGet(js, { 'accept-encoding': 'identity', 'if-none-match': `"${fixtures.sdk.version}"` });
  t.is(revalidated.status, 304);
  t.is(revalidated.body.length, 0);
  t.is(revalidated.headers.etag, `"${fixtures.sdk.version}"`);
  t.is(revalidated.headers['cache-control'], 'public, max-age=300', 'a 304 renews the cache lifetime');
  t.is(
    (await rawGet(js, { 'accept-encoding': 'identity', 'if-none-match': '"0.0.1-00000000"' })).status,
    200,
    'another build is sent in full',
  );

  // What browsers get: brotli (or gzip), decoding to the same script, within the issue's 8 KB budget.
  const br = await rawGet(js, { 'accept-encoding': 'gzip, deflate, br' });
  t.is(br.headers['content-encoding'], 'br');
  t.is(br.headers.vary, 'Accept-Encoding');
  t.is(brotliDecompressSync(br.body).toString('utf8'), fixtures.sdk.iife);
  t.true(br.body.length <= 8 * 1024, `${br.body.length} B`);
  t.not(br.headers.etag, plain.headers.etag, 'different bytes, different strong ETag');
  const gz = await rawGet(js, { 'accept-encoding': 'gzip' });
  t.is(gz.headers['content-encoding'], 'gzip');
  t.is(gunzipSync(gz.body).toString('utf8'), fixtures.sdk.iife);
  t.is((await rawGet(js, { 'accept-encoding': 'gzip', 'if-none-match': gz.headers.etag! })).status, 304);

  const mjs = await rawGet(`${stack.baseUrl}/v1/sdk.mjs?v=${fixtures.sdk.version}`, { 'accept-encoding': 'identity' });
  t.is(mjs.status, 200);
  t.is(mjs.headers['content-type'], 'text/javascript; charset=utf-8');
  t.is(mjs.body.toString('utf8'), fixtures.sdk.esm);
  t.is(mjs.headers['cache-control'], 'public, max-age=31536000, immutable');
  t.is(mjs.headers['access-control-allow-origin'], '*', 'a cross-origin `import` needs CORS');
});

test('CORS answers of POST /v1/ingest let the SDK read Retry-After', async (t) => {
  const origin = fixtures.url;
  const preflight = await fetch(`${stack.baseUrl}/v1/ingest`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    },
  });
  t.is(preflight.status, 204);
  t.is(preflight.headers.get('access-control-allow-origin'), '*');
  t.regex(preflight.headers.get('access-control-allow-headers') ?? '', /Authorization/);
  // An error answer is where Retry-After matters (429, 503); a 401 takes the same path through the middleware.
  const refused = await fetch(`${stack.baseUrl}/v1/ingest`, {
    method: 'POST',
    headers: { origin, 'content-type': 'application/json', authorization: 'Bearer svc_pub_unknown' },
    body: '{}',
  });
  t.is(refused.status, 401);
  t.is(refused.headers.get('access-control-allow-origin'), '*');
  t.true(
    (refused.headers.get('access-control-expose-headers') ?? '').split(/\s*,\s*/).includes('Retry-After'),
    refused.headers.get('access-control-expose-headers') ?? '(none)',
  );
});

/** One POST /v1/ingest the SDK made, and the scenario that was running when it made it. */
interface Post {
  request: Request;
  batch: IngestBatch;
  scenario: Scenario;
  clicks: Map<string, ClickRecord>;
  /** Its answer's status, read before the context closes (0: none). */
  status?: number;
}

interface VisitorRun {
  index: number;
  /** The main tab's session id, from the SDK's own sessionStorage entry. */
  sessionId: string;
  posts: Post[];
  /** Signals the SDK sent per scenario, and what the visitor clicked in it. */
  perScenario: { scenario: Scenario; signals: SentEvent[]; clicks: Map<string, ClickRecord> }[];
  pageErrors: string[];
  sdkVersion: string;
}

async function visitor(index: number, ingestOrigin: string, publishableKey: string): Promise<VisitorRun> {
  const context: BrowserContext = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  // The snippet a site pastes: the versioned URL, the key, no endpoint (the script's own origin).
  const src = `${ingestOrigin}/v1/sdk.js?v=${fixtures.sdk.version}`;
  await context.addCookies([
    {
      name: 'friction',
      value: sdkCookie({ key: publishableKey, src, config: { ...SITE_CONFIG, flushInterval: 250 } }),
      url: fixtures.url,
    },
  ]);
  const pageErrors: string[] = [];
  const posts: Post[] = [];
  let current: { scenario: Scenario; clicks: Map<string, ClickRecord> } | undefined;
  context.on('page', (p) => p.on('pageerror', (e) => pageErrors.push(e.message)));
  context.on('request', (r) => {
    if (r.method() !== 'POST' || r.url() !== `${ingestOrigin}/v1/ingest` || !current) return;
    posts.push({ request: r, batch: r.postDataJSON() as IngestBatch, ...current });
  });
  try {
    const page = await context.newPage();
    const perScenario: VisitorRun['perScenario'] = [];
    for (const [j, s] of PLAN.entries()) {
      // A Visitor per scenario: its click records are this scenario's, even where two scenarios click the same element.
      const v = new Visitor(page, fixtures.url, seeded(1000 * index + j));
      current = { scenario: s, clicks: v.clicks };
      const before = posts.length;
      await v.goto(s.start);
      await s.run(v);
      // Every tab settled before the next load: leaving a page drops a dead-click candidate still open, which would
      // hide exactly the false positives this test is after. Extra tabs (the new-tab link) are then closed.
      for (const p of context.pages()) {
        if (p !== page) await p.waitForFunction(() => !!(window as unknown as { Friction?: unknown }).Friction);
        await settle(p);
      }
      // settle() waited until no batch was in flight, so every answer is in; read them while their pages are open.
      for (const x of posts.slice(before)) x.status = (await x.request.response())?.status() ?? 0;
      for (const p of context.pages()) if (p !== page) await p.close();
      const signals = posts
        .slice(before)
        .filter((x) => x.request.frame().page() === page)
        .flatMap((x) => x.batch.events.filter((e) => e.type === 'signal'));
      perScenario.push({ scenario: s, signals, clicks: v.clicks });
    }
    const info = await page.evaluate(() => ({
      sessionId: (JSON.parse(sessionStorage.getItem('friction.session') || '{}') as { i?: string }).i ?? '',
      version: (window as unknown as { Friction: { version: string } }).Friction.version,
    }));
    return { index, sessionId: info.sessionId, posts, perScenario, pageErrors, sdkVersion: info.version };
  } finally {
    await context.close();
  }
}

test("visitors in Chromium, SDK from the service: the broken elements become issues, with the clicks' coordinates stored", async (t) => {
  t.true(
    VISITORS >= MIN_ISSUE_SESSIONS && [...EXPECTED_ISSUES.values()].every((n) => n >= MIN_ISSUE_SIGNALS),
    'the plan produces enough signals and sessions to open each issue',
  );
  const tenant = stack.tenant;
  const started = Date.now();
  const runs = await Promise.all(
    Array.from({ length: VISITORS }, (_, i) => visitor(i, stack.baseUrl, tenant.publishableKey)),
  );
  t.log(`${VISITORS} visitors × ${PLAN.length} scenarios in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  // The page ran the service's build, and the SDK saw exactly what phase 1 expects of each scenario.
  for (const r of runs) {
    t.is(r.sdkVersion, fixtures.sdk.version, `visitor ${r.index} runs the build ingest serves`);
    t.deepEqual(r.pageErrors, [], `visitor ${r.index}: no page error`);
    t.truthy(r.sessionId, `visitor ${r.index} has a session`);
    for (const { scenario: s, signals, clicks } of r.perScenario) {
      const j = judge(s, signals, clicks);
      t.deepEqual(
        j.missing.map(describeExpected),
        [],
        `visitor ${r.index}, "${s.name}": expected signals detected (sent: ${describeSignals(signals)})`,
      );
      t.deepEqual(describeSignals(j.unexpected), 'none', `visitor ${r.index}, "${s.name}": no other signal`);
    }
  }

  // Every POST got a 202, and every event in them is stored exactly once. Once all are in, the processor has
  // seen everything the visitors caused, so the issue list below is final rather than a snapshot in between.
  const posts = runs.flatMap((r) => r.posts);
  t.deepEqual([...new Set(posts.map((p) => p.status))], [202], 'ingest accepted every batch');
  const sent = new Map<string, { event: SentEvent; post: Post; run: VisitorRun }>();
  for (const r of runs)
    for (const p of r.posts) for (const e of p.batch.events) sent.set(e.id, { event: e, post: p, run: r });
  const ids = [...sent.keys()];
  const db = stack.infra.database.db;
  await eventually(
    async () => {
      const { n } = await db
        .selectFrom('events')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('site_id', '=', tenant.siteId)
        .where('id', 'in', ids)
        .executeTakeFirstOrThrow();
      return Number(n) === ids.length;
    },
    { timeoutMs: 30_000 },
  );

  const issues = await eventually(
    async () => {
      const r = await getJson(`${stack.baseUrl}/v1/query/issues?site_id=${tenant.siteId}&limit=100`, {
        authorization: `Bearer ${tenant.secretKey}`,
      });
      if (r.status !== 200) throw new Error(`issues: ${r.status} ${JSON.stringify(r.body)}`);
      const list = r.body.data.issues as {
        page: string;
        element_selector: string;
        signal_type: string;
        signal_count: number;
        affected_sessions: number;
        status: string;
      }[];
      // Wait for the counts, not just the issues: an issue opens at its 5th signal, and may be read before the rest land.
      const done = [...EXPECTED_ISSUES].every(([k, n]) =>
        list.some((i) => key(i.page, i.signal_type, i.element_selector) === k && i.signal_count === n),
      );
      return done && list;
    },
    { timeoutMs: 30_000 },
  );
  t.deepEqual(
    issues.map((i) => key(i.page, i.signal_type, i.element_selector)).sort(),
    [...EXPECTED_ISSUES.keys()].sort(),
    'the broken elements, with their selectors and signal types, are the only issues: none for a non-friction element',
  );
  for (const i of issues) {
    t.like(
      i,
      {
        status: 'open',
        signal_count: EXPECTED_ISSUES.get(key(i.page, i.signal_type, i.element_selector)),
        affected_sessions: VISITORS,
      },
      key(i.page, i.signal_type, i.element_selector),
    );
  }

  // The stored signal rows: exactly the friction scenarios' signals, once per visitor, on each visitor's session,
  // with the coordinates as sent, and those are where the visitor's pointer actually was on the element.
  const rows = await db
    .selectFrom('signals')
    .select(['event_id', 'session_id', 'page', 'signal_type', 'selector', 'x', 'y', 'vx', 'vy', 'px', 'py'])
    .where('site_id', '=', tenant.siteId)
    .execute();
  const want = runs.flatMap(() => FRICTION.flatMap((s) => s.expected.map((x) => key(x.page, x.signal, x.selector))));
  t.deepEqual(
    rows.map((r) => key(r.page, r.signal_type, r.selector)).sort(),
    want.sort(),
    'signal rows: the expected ones, nothing from the non-friction cases',
  );
  const COORDS = ['x', 'y', 'vx', 'vy', 'px', 'py'] as const;
  for (const row of rows) {
    const what = `${key(row.page, row.signal_type, row.selector)} (${row.event_id})`;
    const origin = sent.get(row.event_id);
    if (!origin) {
      t.fail(`${what}: stored, but no visitor sent it`);
      continue;
    }
    t.is(row.session_id, origin.run.sessionId, `${what}: stored on the visitor's session`);
    const stored = Object.fromEntries(COORDS.map((k) => [k, row[k] === null ? undefined : Number(row[k])])) as Pick<
      SentEvent,
      (typeof COORDS)[number]
    >;
    t.deepEqual(
      stored,
      Object.fromEntries(COORDS.map((k) => [k, origin.event[k]])),
      `${what}: coordinates stored as sent`,
    );
    for (const k of COORDS)
      t.true(
        Number.isInteger(stored[k]) && stored[k]! >= 0 && stored[k]! <= 1000,
        `${what}: ${k}=${stored[k]} is an integer 0..1000`,
      );
    const expected = origin.post.scenario.expected.find(
      (x) => x.signal === row.signal_type && x.selector === row.selector,
    );
    const click = expected?.clicked ? origin.post.clicks.get(expected.clicked) : undefined;
    if (!click) {
      t.fail(`${what}: no recorded click of "${origin.post.scenario.name}" to compare with`);
      continue;
    }
    t.is(coordinateProblem(stored, click), null, `${what}: where the visitor clicked`);
  }
});
