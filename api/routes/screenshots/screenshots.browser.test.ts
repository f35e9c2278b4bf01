import test from 'ava';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { pino } from 'pino';
import { chromiumArgs, ScreenshotCapturer } from './capturer.ts';
import { startEgressProxy } from './egress-proxy.ts';
import { startTestStack, useStack, type TestStack, type TestTenant } from '../../../ops/testing/stack.ts';
import { useResource } from '../../../shared/testing/lifecycle.ts';
import { eventually } from '../../../shared/testing/eventually.ts';
import { getJson } from '../../../shared/testing/http-client.ts';

/**
 * A site on 127.0.0.1: counts requests per path and keeps each one's Via header (the egress proxy's mark); /w records
 * the innerWidth the page reports; /hop and /hops redirect to the metadata address (http, https); /framed embeds both.
 */
interface Site {
  url: string;
  hits: Map<string, number>;
  via: Map<string, string | undefined>;
  widths: number[];
  close(): Promise<void>;
}
async function serveSite(): Promise<Site> {
  const hits = new Map<string, number>();
  const via = new Map<string, string | undefined>();
  const widths: number[] = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    hits.set(u.pathname, (hits.get(u.pathname) ?? 0) + 1);
    via.set(u.pathname, req.headers.via);
    if (u.pathname === '/w') {
      widths.push(Number(u.searchParams.get('w')));
      res.writeHead(204).end();
      return;
    }
    if (u.pathname === '/slow') return; // never answers
    if (u.pathname === '/hop') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      return;
    }
    if (u.pathname === '/hops') {
      res.writeHead(302, { location: 'https://169.254.169.254/latest/meta-data/' }).end();
      return;
    }
    if (u.pathname === '/framed') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><body style="background:#0cf">
        <iframe src="/hop"></iframe><img src="/hops"></body>`);
      return;
    }
    if (u.pathname === '/missing') {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>not here</h1>');
      return;
    }
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(`<!doctype html><meta name="viewport" content="width=device-width">
      <body style="background:#fc0"><h1>${u.pathname}</h1><script>fetch('/w?w=' + innerWidth)</script></body>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    via,
    widths,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const site = useResource(test, serveSite, (s) => s.close());
const allowed = useStack(test, {
  processor: false,
  env: {
    SCREENSHOT_ALLOW_PRIVATE_NETWORKS: 'true',
    SCREENSHOTS_PER_SITE_PER_DAY: '3',
    SCREENSHOT_TIMEOUT_MS: '30000' /* room for a busy machine */,
  },
});
// Webhooks opened to private receivers; screenshots not: the two settings are separate.
const strict = useStack(test, { processor: false, env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' } });

async function tenantOn(stack: TestStack, url: string): Promise<TestTenant> {
  const tenant = await stack.newTenant();
  await sql`update sites set url = ${url} where id = ${tenant.siteId}`.execute(stack.infra.database.db);
  return tenant;
}
const shot = (stack: TestStack, tenant: TestTenant, q: string, key = tenant.secretKey) =>
  getJson(`${stack.baseUrl}/v1/query/page-screenshot?site_id=${tenant.siteId}&${q}`, {
    authorization: `Bearer ${key}`,
  });
/** The cached answer (`cached=1`) for `q` once `done` holds of it, asked every 200 ms for up to `timeoutMs`. */
const settled = (stack: TestStack, tenant: TestTenant, q: string, done: (d: any) => unknown, timeoutMs = 30_000) =>
  eventually(
    async () => {
      const d = (await shot(stack, tenant, `${q}&cached=1`)).body.data;
      return done(d) ? d : undefined;
    },
    { timeoutMs, stepMs: 200 },
  );
/** The stored capture's descriptor for `q`, once there is one. */
const captured = async (stack: TestStack, tenant: TestTenant, q: string) =>
  (await settled(stack, tenant, q, (d) => d.screenshot)).screenshot;
/** Width and height from a PNG's IHDR chunk. */
const pngSize = (b: Buffer) => ({ width: b.readUInt32BE(16), height: b.readUInt32BE(20) });

test.serial(
  'a page is captured in the background: cached=1 is null before, the first request queues once, the descriptor and its PNG follow',
  async (t) => {
    const tenant = await tenantOn(allowed, site.url);
    const before = await shot(allowed, tenant, 'page=/home&cached=1');
    t.is(before.status, 200);
    t.deepEqual(before.body.data, { screenshot: null, reason: 'not_captured' });
    t.is(site.hits.get('/home'), undefined, 'cached=1 never captures');

    // Concurrent first requests: all answer at once with capturing, one capture runs.
    const first = await Promise.all([1, 2, 3].map(() => shot(allowed, tenant, 'page=/home')));
    for (const r of first) t.deepEqual(r.body.data, { screenshot: null, reason: 'capturing' });
    const done = await captured(allowed, tenant, 'page=/home');
    t.is(site.hits.get('/home'), 1, 'one capture for concurrent requests');
    t.like(done, { page: '/home', device: 'desktop', width: 1280, height: 800 });
    t.true(Date.now() - Date.parse(done.captured_at) < 60_000);
    t.is(done.image_url, `/v1/query/page-screenshot/image?site_id=${tenant.siteId}&page=%2Fhome&device=desktop`);

    const img = await fetch(`${allowed.baseUrl}${done.image_url}`, {
      headers: { authorization: `Bearer ${tenant.secretKey}` },
    });
    t.is(img.status, 200);
    t.is(img.headers.get('content-type'), 'image/png');
    const png = Buffer.from(await img.arrayBuffer());
    t.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    t.deepEqual(pngSize(png), { width: 1280, height: 800 });
    t.true(site.widths.includes(1280));
    t.is(site.via.get('/home'), '1.1 friction-egress', 'the loopback page was fetched through the egress proxy');
  },
);

test.serial('device=mobile renders at the phone viewport', async (t) => {
  const tenant = await tenantOn(allowed, site.url);
  t.is((await shot(allowed, tenant, 'page=/phone&device=mobile')).body.data.reason, 'capturing');
  const done = await captured(allowed, tenant, 'page=/phone&device=mobile');
  t.like(done, { page: '/phone', device: 'mobile', width: 390, height: 844 });
  const img = await fetch(`${allowed.baseUrl}${done.image_url}`, {
    headers: { authorization: `Bearer ${tenant.secretKey}` },
  });
  t.deepEqual(pngSize(Buffer.from(await img.arrayBuffer())), { width: 390, height: 844 });
  t.true(site.widths.includes(390), `the page saw innerWidth 390 (saw ${site.widths.join(',')})`);
  // Desktop of the same page is a separate capture.
  t.deepEqual((await shot(allowed, tenant, 'page=/phone&cached=1')).body.data, {
    screenshot: null,
    reason: 'not_captured',
  });
});

test.serial('a page that answers an error status is render_failed, and the image route is 404 for it', async (t) => {
  const tenant = await tenantOn(allowed, site.url);
  t.is((await shot(allowed, tenant, 'page=/missing')).body.data.reason, 'capturing');
  const failed = await settled(allowed, tenant, 'page=/missing', (d) => d.reason === 'render_failed');
  t.deepEqual(failed, { screenshot: null, reason: 'render_failed' });
  // Answered from the stored failure for an hour, not captured again.
  t.is((await shot(allowed, tenant, 'page=/missing')).body.data.reason, 'render_failed');
  const img = await getJson(
    `${allowed.baseUrl}/v1/query/page-screenshot/image?site_id=${tenant.siteId}&page=/missing`,
    { authorization: `Bearer ${tenant.secretKey}` },
  );
  t.is(img.status, 404);
});

test.serial(
  'a page that never answers fails as render_failed after SCREENSHOT_TIMEOUT_MS, and the next capture still runs',
  async (t) => {
    const tenant = await tenantOn(allowed, site.url);
    const started = Date.now();
    t.is((await shot(allowed, tenant, 'page=/slow')).body.data.reason, 'capturing');
    t.is((await shot(allowed, tenant, 'page=/after')).body.data.reason, 'capturing');
    const failed = await settled(allowed, tenant, 'page=/slow', (d) => d.reason === 'render_failed', 70_000);
    t.deepEqual(failed, { screenshot: null, reason: 'render_failed' });
    t.true(Date.now() - started >= 30_000, 'not before SCREENSHOT_TIMEOUT_MS');
    await captured(allowed, tenant, 'page=/after');
    t.pass();
  },
);

test.serial('a redirect to a cloud metadata address is refused even with private networks allowed', async (t) => {
  const tenant = await tenantOn(allowed, site.url);
  t.is((await shot(allowed, tenant, 'page=/hop')).body.data.reason, 'capturing');
  const refused = await settled(
    allowed,
    tenant,
    'page=/hop',
    (d) => d.screenshot === null && d.reason !== 'not_captured',
    60_000,
  );
  t.deepEqual(refused, { screenshot: null, reason: 'refused' });
  t.is(site.hits.get('/hop'), 1);
});

test.serial(
  'redirects of an iframe and an image to the metadata address are refused by the egress proxy; an https main-frame hop refuses the capture',
  async (t) => {
    // A capturer of our own (allowed policy), whose log we read: each hop the proxy refuses is logged with its URL.
    const lines: { msg: string; url?: string; reason?: string }[] = [];
    const log = pino(
      { level: 'info' },
      {
        write: (line: string) => {
          lines.push(JSON.parse(line));
        },
      },
    );
    const capturer = new ScreenshotCapturer({
      db: allowed.infra.database.db,
      log,
      policy: { allowPrivateNetworks: true },
      executablePath: allowed.infra.config.CHROMIUM_PATH,
      timeoutMs: 30_000,
      perSiteDay: 5,
    });
    try {
      const tenant = await tenantOn(allowed, site.url);
      t.is(await capturer.enqueue(tenant.siteId, '/framed', 'desktop'), 'capturing');
      t.is(await capturer.enqueue(tenant.siteId, '/hops', 'desktop'), 'capturing');
      await capturer.idle();
      const rows = await sql<{
        page: string;
        failure: string | null;
        has_png: boolean;
      }>`select page, failure, png is not null as has_png
      from page_screenshots where site_id = ${tenant.siteId} order by page`.execute(allowed.infra.database.db);
      // The page itself rendered: its blocked iframe and image are just missing from the picture.
      t.deepEqual(rows.rows, [
        { page: '/framed', failure: null, has_png: true },
        { page: '/hops', failure: 'refused', has_png: false },
      ]);
      const refused = lines.filter((l) => l.msg === 'screenshot egress refused').map((l) => l.url);
      t.true(
        refused.includes('http://169.254.169.254/latest/meta-data/'),
        `the iframe's http hop: ${JSON.stringify(refused)}`,
      );
      t.true(
        refused.includes('https://169.254.169.254'),
        `the image's and the main frame's https hop: ${JSON.stringify(refused)}`,
      );
      t.true(
        (site.hits.get('/hop') ?? 0) >= 1 && (site.hits.get('/hops') ?? 0) >= 2,
        'the redirects were answered by the site',
      );
    } finally {
      await capturer.close();
    }
  },
);

test.serial(
  "with the capturer's flags and a strict proxy, Chromium reaches loopback only through the proxy: the page, fetch and WebSocket are refused, nothing connects",
  async (t) => {
    // The capturer refuses a loopback site before the browser starts, so the browser is driven here directly.
    let connections = 0;
    const target = net.createServer((s) => {
      connections += 1;
      s.destroy();
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    const port = (target.address() as AddressInfo).port;
    const refused: string[] = [];
    const proxy = await startEgressProxy({
      policy: { allowPrivateNetworks: false },
      timeoutMs: 10_000,
      onRefused: (url) => refused.push(url),
    });
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: allowed.infra.config.CHROMIUM_PATH,
      args: chromiumArgs(proxy.port),
      headless: true,
    });
    try {
      const tab = await browser.newPage();
      const page = await tab.goto(`http://127.0.0.1:${port}/page`);
      t.is(page?.headers()['x-friction-egress'], 'refused');
      const outcome = await tab.evaluate(
        async (p) => ({
          fetch: await fetch(`http://localhost:${p}/x`).then(
            () => 'ok',
            () => 'failed',
          ),
          ws: await new Promise((res) => {
            const w = new WebSocket(`ws://127.0.0.1:${p}/`);
            w.onerror = () => res('error');
            w.onopen = () => res('open');
          }),
        }),
        port,
      );
      t.deepEqual(outcome, { fetch: 'failed', ws: 'error' });
      t.true(
        refused.includes(`http://127.0.0.1:${port}/page`) &&
          refused.includes(`http://localhost:${port}/x`) &&
          refused.includes(`https://127.0.0.1:${port}`),
        JSON.stringify(refused),
      );
      t.is(connections, 0);
    } finally {
      await browser.close();
      await proxy.close();
      await new Promise((r) => target.close(r));
    }
  },
);

test.serial('the daily limit per site: past SCREENSHOTS_PER_SITE_PER_DAY captures, limit_reached', async (t) => {
  const tenant = await tenantOn(allowed, site.url);
  const reasons = [];
  for (const p of ['/l1', '/l2', '/l3', '/l4'])
    reasons.push((await shot(allowed, tenant, `page=${p}`)).body.data.reason);
  t.deepEqual(reasons, ['capturing', 'capturing', 'capturing', 'limit_reached']);
  t.is((await shot(allowed, tenant, 'page=/l4')).body.data.reason, 'limit_reached');
  // Another site has its own quota.
  const other = await tenantOn(allowed, site.url);
  t.is((await shot(allowed, other, 'page=/l4')).body.data.reason, 'capturing');
  await captured(allowed, other, 'page=/l4');
  t.is(site.hits.get('/l4'), 1);
});

test.serial(
  'cross-site and unauthenticated requests: 404 and 401 like every read route; bad input names the field',
  async (t) => {
    const tenant = await tenantOn(allowed, site.url);
    const stranger = await allowed.newTenant();
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
      'base64',
    );
    await sql`insert into page_screenshots (site_id, page, device, width, height, png, failure, captured_at)
    values (${tenant.siteId}, '/own', 'desktop', 1280, 800, ${png}, null, now())`.execute(allowed.infra.database.db);
    t.is((await shot(allowed, tenant, 'page=/own&cached=1')).body.data.screenshot.page, '/own');
    t.is((await shot(allowed, tenant, 'page=/own', stranger.secretKey)).status, 404);
    const image = `${allowed.baseUrl}/v1/query/page-screenshot/image?site_id=${tenant.siteId}&page=/own`;
    t.is((await getJson(image, { authorization: `Bearer ${stranger.secretKey}` })).status, 404);
    t.is((await getJson(image)).status, 401);
    t.is((await getJson(`${allowed.baseUrl}/v1/query/page-screenshot?site_id=${tenant.siteId}&page=/own`)).status, 401);
    t.is((await getJson(image, { authorization: `Bearer ${tenant.publishableKey}` })).status, 403);
    for (const [q, field] of [
      ['page=/own&device=tablet', 'device'],
      ['page=/own&cached=yes', 'cached'],
      ['device=mobile', 'page'],
      ['page=%2Fa%00', 'page'],
    ]) {
      const r = await shot(allowed, tenant, q);
      t.is(r.status, 400, q);
      t.true(JSON.stringify(r.body.error).includes(field), `${q}: ${JSON.stringify(r.body.error)}`);
    }
    t.is(
      (await shot(allowed, stranger, 'page=/own&cached=1')).body.data.reason,
      'not_captured',
      "another site's captures are its own",
    );
  },
);

test.serial(
  'with SCREENSHOT_ALLOW_PRIVATE_NETWORKS unset a site on a private address is refused and never contacted, though OUTBOUND_ALLOW_PRIVATE_NETWORKS=true',
  async (t) => {
    const tenant = await tenantOn(strict, `${site.url}/base`);
    t.is((await shot(strict, tenant, 'page=/private')).body.data.reason, 'capturing');
    const refused = await settled(strict, tenant, 'page=/private', (d) => d.reason === 'refused');
    t.deepEqual(refused, { screenshot: null, reason: 'refused' });
    t.is(site.hits.get('/base/private'), undefined);
  },
);

test.serial(
  'embedded mode (PGlite): the quota statement, the bytea PNG and the image route work the same',
  async (t) => {
    const embedded = await startTestStack({
      embedded: true,
      processor: false,
      env: { SCREENSHOT_ALLOW_PRIVATE_NETWORKS: 'true', SCREENSHOTS_PER_SITE_PER_DAY: '1' },
    });
    try {
      const tenant = await tenantOn(embedded, site.url);
      t.is((await shot(embedded, tenant, 'page=/embedded')).body.data.reason, 'capturing');
      t.is((await shot(embedded, tenant, 'page=/embedded2')).body.data.reason, 'limit_reached');
      const done = await captured(embedded, tenant, 'page=/embedded');
      const img = await fetch(`${embedded.baseUrl}${done.image_url}`, {
        headers: { authorization: `Bearer ${tenant.secretKey}` },
      });
      t.deepEqual(pngSize(Buffer.from(await img.arrayBuffer())), { width: 1280, height: 800 });
    } finally {
      await embedded.stop();
    }
  },
);
