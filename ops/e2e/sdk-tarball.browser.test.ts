/**
 * @friction/sdk as a user installs it (issue 28, item 1): packed to a tarball, installed with the machine's Node 20
 * npm into an empty directory, and loaded from there by a page in headless Chromium, resolved through the installed
 * package.json's `exports` as a bundler would. The page runs `init`, `track` and `flush` against a running Friction,
 * whose database must then hold the events.
 */
import { createServer, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../ingest/sdk/testing/browser.ts';
import { packSdk } from '../pack.ts';
import { siteRows } from '../testing/session-traffic.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { startTestStack, type TestStack } from '../testing/stack.ts';
import { npmInstallOffline } from '../../shared/testing/packages.ts';

let work: string;
let app: string;
let stack: TestStack;
let browser: Browser;
let site: Server;

test.before(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'friction-sdk-tgz-'));
  app = path.join(work, 'app');
  mkdirSync(app);
  const tarball = packSdk(path.join(work, 'dist'));
  await npmInstallOffline(app, tarball);
  [stack, browser] = await Promise.all([startTestStack(), launchChromium()]);
});
test.after.always(async () => {
  await browser?.close();
  site?.close();
  await stack?.stop();
  rmSync(work, { recursive: true, force: true });
});

test('the installed package loads in Chromium and its events reach the service', async (t) => {
  const installed = path.join(app, 'node_modules', '@friction', 'sdk');
  const manifest = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as {
    version: string;
    exports: { '.': { import: string; types: string } };
  };
  const entry = manifest.exports['.'].import;
  t.truthy(
    readFileSync(path.join(installed, manifest.exports['.'].types), 'utf8').includes('export'),
    'the declarations are installed',
  );
  t.truthy(readFileSync(path.join(installed, 'CHANGELOG.md'), 'utf8'));
  const tenant = await stack.newTenant();
  const page = `<!doctype html><html><head><title>shop</title>
<script type="importmap">{"imports":{"@friction/sdk":"/node_modules/@friction/sdk/${entry.replace(/^\.\//, '')}"}}</script>
<script type="module">
  import { init, track, flush, version } from '@friction/sdk';
  init({ key: ${JSON.stringify(tenant.publishableKey)}, endpoint: ${JSON.stringify(stack.baseUrl)}, flushInterval: 200 });
  track('installed_from_tarball', { ok: true });
  await flush();
  window.fromTarball = version;
</script></head><body><h1>Checkout</h1></body></html>`;
  site = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname.startsWith('/node_modules/')) {
      const file = path.join(app, path.normalize(url.pathname));
      res.setHeader('content-type', 'text/javascript');
      res.end(readFileSync(file));
      return;
    }
    res.setHeader('content-type', 'text/html');
    res.end(page);
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
  const context = await browser.newContext();
  const tab = await context.newPage();
  const errors: string[] = [];
  tab.on('pageerror', (e) => errors.push(e.message));
  tab.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await tab.goto(`${origin}/checkout`);
  const version = await eventually(
    () => tab.evaluate(() => (window as unknown as { fromTarball?: string }).fromTarball),
    { timeoutMs: 20_000 },
  );
  t.true(version.startsWith(`${manifest.version}-`), version);
  // The page view and the custom event, stored by the processor.
  await eventually(async () => (await siteRows(stack.infra.database.db, 'events', tenant.siteId)) >= 2, {
    timeoutMs: 30_000,
    stepMs: 200,
  });
  await context.close();
  t.deepEqual(errors, []);
});
