import test from 'ava';
import { createServer, type RequestListener, type Server } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createHttpApp, httpListener } from '../../shared/http/app.ts';
import { ingestCors } from '../../shared/http/cors.ts';
import type { DirectRoute } from '../../shared/http/direct-routes.ts';
import { createLogger } from '../../shared/logger.ts';
import { ingestRole } from '../../ingest/main.ts';
import { startTestStack } from '../testing/stack.ts';
import { closeServer } from '../server.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';

/**
 * POST /v1/ingest is served outside Koa's chain (direct-routes.ts). The Koa route with the same handler is the
 * reference: for every kind of request, accepted or refused, the direct route must answer what Koa's chain answers,
 * status, envelope and header fields alike.
 */

async function listen(listener: RequestListener): Promise<{ server: Server; url: string }> {
  const server = createServer(listener).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

interface Case {
  name: string;
  /** A fresh request each call: two identical accepted batches would be answered as duplicates. */
  request(
    key: string,
    secretKey: string,
  ): { method?: string; path?: string; headers?: Record<string, string>; body?: string | Uint8Array<ArrayBuffer> };
  /** Whether the direct route's handler takes it: the rest are refused before it (a URL no route could store) or fall
   *  through to Koa's chain on both servers (other methods, another case of the path). */
  handled: boolean;
}

const json = (body: unknown) => JSON.stringify(body);
const cases: Case[] = [
  {
    name: 'an accepted batch',
    handled: true,
    request: (key) => ({ headers: { authorization: `Bearer ${key}` }, body: json(sdkBatch({ events: 3 })) }),
  },
  {
    name: 'from a browser origin',
    handled: true,
    request: (key) => ({
      headers: { authorization: `Bearer ${key}`, origin: 'https://shop.example' },
      body: json(sdkBatch()),
    }),
  },
  {
    name: 'a text/plain beacon, key in the body',
    handled: true,
    request: (key) => ({
      headers: { 'content-type': 'text/plain;charset=UTF-8', origin: 'https://shop.example' },
      body: json({ ...sdkBatch(), key }),
    }),
  },
  {
    name: 'gzip',
    handled: true,
    request: (key) => ({
      headers: { authorization: `Bearer ${key}`, 'content-encoding': 'gzip' },
      body: new Uint8Array(gzipSync(json(sdkBatch()))),
    }),
  },
  {
    name: 'a trailing slash and a query',
    handled: true,
    request: (key) => ({
      path: '/v1/ingest/?v=2',
      headers: { authorization: `Bearer ${key}` },
      body: json(sdkBatch()),
    }),
  },
  {
    name: 'a caller request id',
    handled: true,
    request: (key) => ({
      headers: { authorization: `Bearer ${key}`, 'x-request-id': 'caller-req-0001' },
      body: json(sdkBatch()),
    }),
  },
  {
    name: 'NUL in the body (replaced)',
    handled: true,
    request: (key) => ({
      headers: { authorization: `Bearer ${key}` },
      body: json({ ...sdkBatch(), context: { device: 'desktop', app_version: 'v\u00001' } }),
    }),
  },
  {
    name: 'NUL in the query',
    handled: false,
    request: (key) => ({
      path: '/v1/ingest?x=%00',
      headers: { authorization: `Bearer ${key}`, origin: 'https://shop.example' },
      body: json(sdkBatch()),
    }),
  },
  {
    name: 'an unknown key',
    handled: true,
    request: () => ({
      headers: { authorization: 'Bearer pk_live_nope', origin: 'https://shop.example' },
      body: json(sdkBatch()),
    }),
  },
  {
    name: 'a secret key (403)',
    handled: true,
    request: (_key, secret) => ({ headers: { authorization: `Bearer ${secret}` }, body: json(sdkBatch()) }),
  },
  {
    name: 'a malformed Authorization header',
    handled: true,
    request: () => ({ headers: { authorization: 'Basic abc' }, body: json(sdkBatch()) }),
  },
  { name: 'no key at all', handled: true, request: () => ({ body: json(sdkBatch()) }) },
  {
    name: 'a wrong content type',
    handled: true,
    request: (key) => ({
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/xml' },
      body: '<batch/>',
    }),
  },
  {
    name: 'no content type',
    handled: true,
    request: (key) => ({
      headers: { authorization: `Bearer ${key}`, 'content-type': '' },
      body: new TextEncoder().encode(json(sdkBatch())),
    }),
  },
  {
    name: 'invalid JSON',
    handled: true,
    request: (key) => ({ headers: { authorization: `Bearer ${key}` }, body: '{"events": [' }),
  },
  {
    name: 'an invalid field',
    handled: true,
    request: (key) => ({
      headers: { authorization: `Bearer ${key}` },
      body: json({ ...sdkBatch(), events: [{ id: 'x', type: 'page_view' }] }),
    }),
  },
  {
    name: 'nesting past the bound',
    handled: true,
    request: (key) => ({ headers: { authorization: `Bearer ${key}` }, body: `${'['.repeat(100)}${']'.repeat(100)}` }),
  },
  {
    name: 'a body over the limit',
    handled: true,
    request: (key) => ({
      headers: { authorization: `Bearer ${key}` },
      body: json({ ...sdkBatch(), pad: 'x'.repeat(1_100_000) }),
    }),
  },
  { name: 'GET (405)', handled: false, request: () => ({ method: 'GET' }) },
  {
    name: 'a CORS preflight',
    handled: false,
    request: () => ({
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' },
    }),
  },
  {
    name: 'another case of the path',
    handled: false,
    request: (key) => ({ path: '/V1/Ingest', headers: { authorization: `Bearer ${key}` }, body: json(sdkBatch()) }),
  },
];

/** The header fields an answer must share; the date and, unless the caller named it, the request id differ by nature. */
function comparableHeaders(h: Headers, callerId: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  h.forEach((value, name) => {
    if (name === 'date' || (name === 'x-request-id' && !callerId)) return;
    // One more request of the key's budget has been counted by the time the second server answers, and the seconds
    // to the window's reset tick down between the two answers when they straddle a second: both say a whole number.
    out[name] =
      name === 'ratelimit-remaining' ? 'n' : name === 'ratelimit-reset' && /^\d+$/.test(value) ? 'seconds' : value;
  });
  return out;
}

test('POST /v1/ingest served directly answers exactly what the Koa route answers', async (t) => {
  const stack = await startTestStack({ processor: false });
  const log = createLogger('silent');
  const role = ingestRole(stack.infra);
  let served = 0;
  const counted: DirectRoute[] = role.direct.map((r) => ({
    ...r,
    handle: (request, set) => (served++, r.handle(request, set)),
  }));
  const options = {
    role: 'ingest',
    log,
    routers: role.routers,
    before: [ingestCors(role.corsPaths)],
    requestLogLevel: 'debug' as const,
  };
  const reference = await listen(createHttpApp(options).callback());
  const direct = await listen(httpListener({ ...options, direct: counted }));
  t.teardown(async () => {
    await closeServer(reference.server);
    await closeServer(direct.server);
    await stack.stop();
  });

  const send = async (base: string, c: Case) => {
    const {
      method = 'POST',
      path = '/v1/ingest',
      headers = {},
      body,
    } = c.request(stack.tenant.publishableKey, stack.tenant.secretKey);
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: res.status, text: await res.text(), headers: res.headers };
  };
  for (const c of cases) {
    const before = served;
    const want = await send(reference.url, c);
    t.is(served, before, `${c.name}: the reference server never takes the direct route`);
    const got = await send(direct.url, c);
    t.is(
      served,
      before + (c.handled ? 1 : 0),
      `${c.name}: ${c.handled ? 'served directly' : 'not by the direct handler'}`,
    );
    t.is(got.status, want.status, `${c.name}: status`);
    t.deepEqual(
      got.text ? JSON.parse(got.text) : got.text,
      want.text ? JSON.parse(want.text) : want.text,
      `${c.name}: body`,
    );
    const callerId = c.request('', '').headers?.['x-request-id'] !== undefined;
    t.deepEqual(
      comparableHeaders(got.headers, callerId),
      comparableHeaders(want.headers, callerId),
      `${c.name}: header fields`,
    );
    t.regex(got.headers.get('x-request-id') ?? '', /^[\w.:-]{8,128}$/, `${c.name}: a request id`);
  }
  // Every kind of answer was compared, not only acceptances.
  const statuses = new Set<number>();
  for (const c of cases) statuses.add((await send(direct.url, c)).status);
  t.deepEqual([...statuses].sort(), [202, 204, 400, 401, 403, 405, 413, 415]);
});

test('a client that drops the connection mid-body costs the direct route nothing: the next batches are accepted', async (t) => {
  const stack = await startTestStack({ processor: false });
  const role = ingestRole(stack.infra);
  const { server, url } = await listen(
    httpListener({
      role: 'ingest',
      log: createLogger('silent'),
      routers: role.routers,
      direct: role.direct,
      requestLogLevel: 'debug',
    }),
  );
  t.teardown(async () => {
    await closeServer(server);
    await stack.stop();
  });
  const port = Number(new URL(url).port);
  const body = json(sdkBatch());
  for (let i = 0; i < 20; i++) {
    // Headers, half the body, then a reset: the handler is reading the body when the request goes away.
    await new Promise<void>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(
          `POST /v1/ingest HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${stack.tenant.publishableKey}\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, body.length >> 1)}`,
        );
        setImmediate(() => (socket.resetAndDestroy(), resolve()));
      });
      socket.on('error', reject);
    });
  }
  const answers = await Promise.all(
    Array.from({ length: 20 }, () =>
      fetch(`${url}/v1/ingest`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.tenant.publishableKey}` },
        body: json(sdkBatch()),
      }).then(async (r) => ({ status: r.status, body: await r.json() })),
    ),
  );
  t.deepEqual(
    answers.map((a) => a.status),
    Array(20).fill(202),
  );
  t.true(answers.every((a) => a.body.data.accepted === 2));
});
