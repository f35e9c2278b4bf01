/**
 * GET /v1/sdk.js when the build is slow or fails: ingest must keep serving everything else, log the failure, and
 * answer 503 on the SDK routes, never an error page cached as the script. (Serving the real build, its caching and
 * codings are checked against the running service in ops/e2e/sdk-service.browser.test.ts.)
 */
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import test, { type ExecutionContext } from 'ava';
import Router from '@koa/router';
import { pino } from 'pino';
import { createHttpApp } from '../shared/http/app.ts';
import { sdkRouter, type SdkBuild } from './sdk.routes.ts';

/** A logger whose lines the test can read. */
function capturedLog() {
  const lines: { level: number; msg: string; err?: { message: string } }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

/** The SDK router beside another route, served like a role serves it (error envelope, 404s), until the test ends. */
async function serve(t: ExecutionContext, build: SdkBuild, waitMs?: number) {
  const { log, lines } = capturedLog();
  const other = new Router();
  other.get('/v1/other', (ctx) => {
    ctx.body = { data: 'still here', error: null };
  });
  const app = createHttpApp({ role: 'ingest', log, routers: [other, sdkRouter({ log, build, waitMs })] });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { base, lines };
}

const code = { iife: 'window.Friction={};', esm: 'export const version="t";', version: '9.9.9-deadbeef' };
const deferred = () => {
  let resolve!: (v: typeof code) => void;
  const promise = new Promise<typeof code>((r) => (resolve = r));
  return { promise, resolve };
};

test('a failed build is logged once, both routes answer 503 (not cached, CORS), and the rest of ingest is untouched', async (t) => {
  const s = await serve(t, async () => {
    throw new Error('esbuild: Could not resolve "./missing.ts"');
  });
  for (const path of ['/v1/sdk.js', '/v1/sdk.mjs', '/v1/sdk.js']) {
    const r = await fetch(`${s.base}${path}`);
    t.is(r.status, 503, path);
    t.is(r.headers.get('cache-control'), 'no-store', `${path}: a CDN must not keep the error in place of the script`);
    t.is(r.headers.get('access-control-allow-origin'), '*');
    t.is(r.headers.get('retry-after'), '300');
    t.like(await r.json(), { data: null, error: { code: 'unavailable', status: 503 } });
  }
  t.is((await fetch(`${s.base}/v1/other`)).status, 200);
  // (Each 503 also gets the app's usual error-level request line; the build failure itself is told once, with its cause.)
  const failures = s.lines.filter((l) => l.level >= 50 && /browser SDK build failed/.test(l.msg));
  t.is(failures.length, 1, 'the failure is logged once, at startup, not per request');
  t.regex(failures[0].err?.message ?? '', /missing\.ts/);
});

test('a build that returns garbage counts as failed', async (t) => {
  const s = await serve(t, async () => ({ ...code, version: 'has "quotes"' }));
  t.is((await fetch(`${s.base}/v1/sdk.js`)).status, 503, 'a version that cannot be an ETag is not served');
});

test('requests made while the build runs wait for it', async (t) => {
  const d = deferred();
  const s = await serve(t, () => d.promise, 10_000);
  const early = fetch(`${s.base}/v1/sdk.js`);
  // The route must not have answered yet: nothing is built.
  const raced = await Promise.race([
    early.then(() => 'answered'),
    new Promise((r) => setTimeout(() => r('waiting'), 150)),
  ]);
  t.is(raced, 'waiting');
  d.resolve(code);
  const r = await early;
  t.is(r.status, 200);
  t.is(await r.text(), code.iife);
  t.is(r.headers.get('etag'), `"${code.version}+gzip"`, 'fetch asks for gzip: the ETag names the coding');
});

test('a build slower than the wait answers 503 with a short Retry-After, then serves once done', async (t) => {
  const d = deferred();
  const s = await serve(t, () => d.promise, 100);
  const r = await fetch(`${s.base}/v1/sdk.mjs`);
  t.is(r.status, 503);
  t.is(r.headers.get('retry-after'), '1');
  d.resolve(code);
  await d.promise;
  const again = await fetch(`${s.base}/v1/sdk.mjs?v=${code.version}`);
  t.is(again.status, 200);
  t.is(await again.text(), code.esm);
  t.is(again.headers.get('cache-control'), 'public, max-age=31536000, immutable');
});

test('If-None-Match: lists and weak forms of the current ETag are a 304, and HEAD carries no body', async (t) => {
  const s = await serve(t, async () => code);
  const h = (inm: string) => ({ 'accept-encoding': 'identity', 'if-none-match': inm });
  t.is((await fetch(`${s.base}/v1/sdk.js`, { headers: h(`"0.0.0-old", "${code.version}"`) })).status, 304);
  t.is(
    (await fetch(`${s.base}/v1/sdk.js`, { headers: h(`W/"${code.version}"`) })).status,
    304,
    'If-None-Match uses the weak comparison',
  );
  t.is((await fetch(`${s.base}/v1/sdk.js`, { headers: h('*') })).status, 304);
  t.is(
    (await fetch(`${s.base}/v1/sdk.js`, { headers: h(`"${code.version}+br"`) })).status,
    200,
    'the br ETag does not validate the plain bytes',
  );
  const notModified = await fetch(`${s.base}/v1/sdk.js?v=${code.version}`, { headers: h(`"${code.version}"`) });
  t.is(
    notModified.headers.get('etag'),
    `"${code.version}"`,
    'a 304 carries the validator and the cache policy it renews',
  );
  t.is(notModified.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  const head = await fetch(`${s.base}/v1/sdk.js`, { method: 'HEAD', headers: { 'accept-encoding': 'identity' } });
  t.is(head.status, 200);
  t.is(head.headers.get('content-length'), String(Buffer.byteLength(code.iife)));
  t.is(await head.text(), '');
});
