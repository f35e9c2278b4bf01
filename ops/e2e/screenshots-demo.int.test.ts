/**
 * Screenshots out of the box (issue 28, item 5): the demo tenant's site is the api's own demo shop, captured under
 * the default outbound guard (private networks refused); and a failed capture is retried as soon as the site's URL
 * changes, not an hour later.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { sql } from 'kysely';
import { ensureDemoCredentials } from '../bootstrap.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson } from '../../shared/testing/http-client.ts';
import { startTestStack, type TestStack } from '../testing/stack.ts';

let stack: TestStack;
let dataDir: string;
test.before(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'friction-shots-'));
  stack = await startTestStack({
    processor: false,
    env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'false', FRICTION_DATA_DIR: dataDir, SCREENSHOT_TIMEOUT_MS: '30000' },
  });
});
test.after.always(async () => {
  await stack?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const shot = (siteId: string, key: string, q: string) =>
  getJson(`${stack.baseUrl}/v1/query/page-screenshot?site_id=${siteId}&${q}`, { authorization: `Bearer ${key}` });

test.serial("the demo tenant's site is the demo shop, served by the api and captured with the guard on", async (t) => {
  const { creds } = await ensureDemoCredentials(stack.infra, stack.baseUrl);
  const site = await stack.infra.database.db
    .selectFrom('sites')
    .select('url')
    .where('id', '=', creds.site_id)
    .executeTakeFirstOrThrow();
  t.is(site.url, `${stack.baseUrl}/demo-shop`);
  const page = await fetch(`${stack.baseUrl}/demo-shop/checkout`);
  t.is(page.status, 200);
  t.regex(await page.text(), /id="pay-now"/, 'the element the demo traffic rage-clicks is on the page');
  t.is((await fetch(`${stack.baseUrl}/demo-shop/nowhere`)).status, 404);

  t.is((await shot(creds.site_id, creds.secret_key, 'page=/checkout')).body.data.reason, 'capturing');
  const done = await eventually(
    async () => (await shot(creds.site_id, creds.secret_key, 'page=/checkout&cached=1')).body.data.screenshot,
    { timeoutMs: 60_000, stepMs: 200 },
  );
  t.like(done, { page: '/checkout', device: 'desktop', width: 1280, height: 800 });
  const img = await fetch(`${stack.baseUrl}${done.image_url}`, {
    headers: { authorization: `Bearer ${creds.secret_key}` },
  });
  t.is(img.headers.get('content-type'), 'image/png');
  t.true((await img.arrayBuffer()).byteLength > 5_000, 'a rendered page, not an empty image');
});

test.serial("a failed capture is retried at once after the site's URL changes", async (t) => {
  const tenant = await stack.newTenant();
  const db = stack.infra.database.db;
  // What a new install used to have: a URL nothing serves (and loopback, refused by the default guard).
  await sql`update sites set url = 'http://localhost:3000' where id = ${tenant.siteId}`.execute(db);
  t.is((await shot(tenant.siteId, tenant.secretKey, 'page=/checkout')).body.data.reason, 'capturing');
  const failed = await eventually(
    async () => {
      const r = (await shot(tenant.siteId, tenant.secretKey, 'page=/checkout&cached=1')).body.data;
      return r.reason !== 'capturing' && r.reason !== 'not_captured' && r;
    },
    { timeoutMs: 60_000, stepMs: 200 },
  );
  t.deepEqual(failed, { screenshot: null, reason: 'refused' });
  t.is(
    (await shot(tenant.siteId, tenant.secretKey, 'page=/checkout')).body.data.reason,
    'refused',
    'same URL: the failure stands',
  );

  await sql`update sites set url = ${`${stack.baseUrl}/demo-shop`} where id = ${tenant.siteId}`.execute(db);
  t.is(
    (await shot(tenant.siteId, tenant.secretKey, 'page=/checkout')).body.data.reason,
    'capturing',
    'a new URL: captured again at once',
  );
  const done = await eventually(
    async () => (await shot(tenant.siteId, tenant.secretKey, 'page=/checkout&cached=1')).body.data.screenshot,
    { timeoutMs: 60_000, stepMs: 200 },
  );
  t.is(done.page, '/checkout');
});
