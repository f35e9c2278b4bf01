import test from 'ava';
import { loggedTestDatabase } from '../testing/database.ts';
import { insertOrg, provisionSite } from '../tenancy/provision.ts';
import { KeyResolver } from './key-resolver.ts';

// Refresh ahead: a known key's entry is renewed in the background before it expires, so ingest's requests do not
// wait for the database (behind the processor's transactions) every TTL.

const until = async (cond: () => boolean, what: string) => {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
};

test('a key in the last fifth of its TTL is answered from the cache and refreshed in the background', async (t) => {
  let reads = 0;
  const db = await loggedTestDatabase(t, 'key_resolver', (e) => {
    if (e.level === 'query' && /^\s*select/i.test(e.query.sql) && /api_keys/.test(e.query.sql)) reads++;
  });
  const orgId = await insertOrg(db, { name: 'o' });
  const site = await provisionSite(db, { orgId, name: 's', url: 'https://s.example' });
  reads = 0;
  // Long enough that the refreshed entry (valid until about 1.85 TTL) still holds at the check past 1 TTL on a busy machine.
  const ttlMs = 4_000;
  const keys = new KeyResolver(db, ttlMs);
  const firstAt = Date.now();
  t.is((await keys.resolve(site.publishableKey))?.siteId, site.siteId);
  t.is(reads, 1);
  // Inside the TTL's first four fifths: no read.
  t.truthy(await keys.resolve(site.publishableKey));
  t.is(reads, 1);
  await until(() => Date.now() >= firstAt + ttlMs * 0.85, 'the last fifth of the TTL');
  t.truthy(await keys.resolve(site.publishableKey));
  await until(() => reads === 2, 'the background refresh');
  // Past the first entry's expiry the refreshed one answers: no request waited for a read.
  await until(() => Date.now() >= firstAt + ttlMs + 50, 'the first expiry');
  const before = reads;
  t.truthy(await keys.resolve(site.publishableKey));
  t.is(reads, before);
});
