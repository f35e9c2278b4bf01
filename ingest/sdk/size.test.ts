/** The SDK's byte budget and the shape of its two builds. */
import test from 'ava';
import { runInNewContext } from 'node:vm';
import { gzipSync } from 'node:zlib';
import { buildSdk } from './build.ts';

/** Issue 5: at most 8 KB minified and gzipped. */
const BUDGET = 8 * 1024;

const built = buildSdk();

/** The public API, in sort order: the global `Friction`'s keys, and the ESM build's exports besides `default`. */
const API = ['conversion', 'flush', 'identify', 'init', 'optIn', 'optOut', 'stats', 'track', 'version'];

test('the script-tag build is at most 8 KB minified and gzipped', async (t) => {
  const { iife } = await built;
  const gz = gzipSync(iife).length;
  t.log(`friction.js: ${iife.length} B minified, ${gz} B gzipped (budget ${BUDGET} B)`);
  t.true(gz <= BUDGET, `${gz} B gzipped is over the ${BUDGET} B budget`);
});

test('the ESM build is within the same budget', async (t) => {
  const { esm } = await built;
  t.true(gzipSync(esm).length <= BUDGET);
});

test('the version names the code: package version plus a hash of the build', async (t) => {
  const { iife, esm, version } = await built;
  t.regex(version, /^\d+\.\d+\.\d+-[0-9a-f]{8}$/);
  t.true(iife.includes(JSON.stringify(version)) && esm.includes(JSON.stringify(version)), 'stamped into both builds');
  t.is((await buildSdk()).version, version, 'the same code gives the same version');
});

test('the IIFE adds one global, Friction, once, and is minified', async (t) => {
  const { iife, version } = await built;
  t.false(/\n\s+\w/.test(iife), 'no indented lines: minified');
  // A bare global object: no script element, so no auto-init; anything else it defined would show up.
  const global: Record<string, unknown> = { document: { currentScript: null } };
  global.window = global;
  const before = Object.keys(global);
  runInNewContext(iife, global);
  t.deepEqual(
    Object.keys(global).filter((k) => !before.includes(k)),
    ['Friction'],
  );
  const api = global.Friction as Record<string, unknown>;
  t.deepEqual(Object.keys(api).sort(), API);
  t.is(api.version, version);
  runInNewContext(iife, global);
  t.is(global.Friction, api, 'a second copy of the tag leaves the first in charge');
});

test('the ESM build imports outside a browser (SSR) and stays inert', async (t) => {
  const { esm } = await built;
  const mod = (await import(`data:text/javascript;base64,${Buffer.from(esm).toString('base64')}`)) as Record<
    string,
    unknown
  > & {
    init(o: unknown): unknown;
    track(n: string): unknown;
    stats(): { sampled: boolean; queued: number };
  };
  t.deepEqual(Object.keys(mod).sort(), [...API, 'default'].sort());
  t.is(mod.init({ key: 'svc_pub_x', endpoint: 'http://127.0.0.1:1' }), false, 'no document: nothing to start');
  t.notThrows(() => mod.track('x'));
  t.like(mod.stats(), { sampled: false, queued: 0 });
});
