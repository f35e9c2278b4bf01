import test from 'ava';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { conditionalGet, encodeJson } from './conditional-get.ts';

/** A Koa app whose only middleware after conditionalGet answers `body` on every path. */
async function serve(body: unknown) {
  const app = new Koa();
  app.use(conditionalGet);
  app.use((ctx) => {
    ctx.body = body;
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, close: () => new Promise((r) => server.close(r)) };
}

test('an answer encoded by its route leaves as the same bytes and ETag conditionalGet gives the value itself', async (t) => {
  const value = { data: { pages: [{ page: '/ü', score: 1.5 }] }, error: null };
  const plain = await serve(value);
  const encoded = await serve(encodeJson(value));
  try {
    for (const path of ['/v1/query/scores', '/v1/scores']) {
      const a = await fetch(plain.base + path);
      const b = await fetch(encoded.base + path);
      t.is(a.headers.get('etag'), b.headers.get('etag'), path);
      t.is(b.headers.get('content-type'), 'application/json; charset=utf-8', path);
      t.is(await b.text(), JSON.stringify(value), path);
      t.is(await a.text(), JSON.stringify(value), path);
    }
    // Only the query routes carry the ETag; a matching If-None-Match is a 304 without a body.
    const etag = encodeJson(value).etag;
    t.is((await fetch(`${encoded.base}/v1/scores`)).headers.get('etag'), null);
    const notModified = await fetch(`${encoded.base}/v1/query/scores`, { headers: { 'if-none-match': etag } });
    t.is(notModified.status, 304);
    t.is(await notModified.text(), '');
  } finally {
    await plain.close();
    await encoded.close();
  }
});
