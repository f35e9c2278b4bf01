import test from 'ava';
import { randomBytes } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { precompress } from './precompressed.ts';

test('precompress: both codings decode to the body, first computed and then read from the disk cache', async (t) => {
  // New bytes each run, so the first call cannot find them in the cache.
  const body = Buffer.from(`const x = "${randomBytes(16).toString('hex')}";\n`.repeat(200));
  for (const text of [false, true]) {
    const first = await precompress(body, { text });
    const again = await precompress(body, { text });
    for (const p of [first, again]) {
      t.is(p.identity, body);
      t.deepEqual(gunzipSync(p.gzip), body);
      t.deepEqual(brotliDecompressSync(p.br), body);
      t.true(p.br.length < body.length / 10);
    }
    t.deepEqual(again.gzip, first.gzip);
    t.deepEqual(again.br, first.br);
  }
});
