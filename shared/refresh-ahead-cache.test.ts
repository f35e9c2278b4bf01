import test from 'ava';
import { RefreshAheadCache } from './refresh-ahead-cache.ts';

/** A cache on a clock the test moves, and a read that counts its calls and answers what `answers` says next. */
function setup(o: { ttlMs: number; shortLivedMs?: number }) {
  let now = 1_000_000;
  const cache = new RefreshAheadCache<string | null>({
    ttlMs: o.ttlMs,
    maxEntries: 10,
    now: () => now,
    ...(o.shortLivedMs !== undefined && { shortLived: { ttlMs: o.shortLivedMs, is: (v) => v === null } }),
  });
  const reads: string[] = [];
  let answer: string | null = 'v1';
  const read = async (): Promise<string | null> => {
    reads.push(answer ?? 'null');
    return answer;
  };
  return {
    cache,
    reads,
    read,
    answer: (v: string | null) => (answer = v),
    advance: (ms: number) => (now += ms),
  };
}

test('one read per key at a time, then the answer is served from memory for the TTL', async (t) => {
  const s = setup({ ttlMs: 1000 });
  t.deepEqual(await Promise.all([s.cache.get('k', s.read), s.cache.get('k', s.read)]), ['v1', 'v1']);
  s.answer('v2');
  s.advance(700);
  t.is(await s.cache.get('k', s.read), 'v1');
  t.deepEqual(s.reads, ['v1'], 'before the last fifth of the TTL: no read');
});

test('in the last fifth of the TTL a hit is answered at once and refreshed behind it', async (t) => {
  const s = setup({ ttlMs: 1000 });
  await s.cache.get('k', s.read);
  s.answer('v2');
  s.advance(850);
  t.is(await s.cache.get('k', s.read), 'v1', 'the remembered answer, without waiting');
  await new Promise((resolve) => setImmediate(resolve)); // the background read's callbacks run
  t.is(await s.cache.get('k', s.read), 'v2', 'the refreshed one next');
  t.deepEqual(s.reads, ['v1', 'v2']);
});

test('a short-lived answer is kept for its own TTL and never refreshed ahead', async (t) => {
  const s = setup({ ttlMs: 10_000, shortLivedMs: 100 });
  s.answer(null);
  t.is(await s.cache.get('k', s.read), null);
  s.advance(90);
  t.is(await s.cache.get('k', s.read), null);
  t.deepEqual(s.reads, ['null'], 'no refresh ahead at 90 % of its TTL');
  s.answer('v1');
  s.advance(20);
  t.is(await s.cache.get('k', s.read), 'v1', 'read again once expired');
});

test('an invalidation forgets the key, and a read that started before it is not remembered', async (t) => {
  const s = setup({ ttlMs: 1000 });
  await s.cache.get('k', s.read);
  s.cache.invalidate('k');
  s.answer('v2');
  t.is(await s.cache.get('k', s.read), 'v2');

  let finish: (v: string) => void = () => {};
  const slow = s.cache.get('other', () => new Promise<string>((resolve) => (finish = resolve)));
  s.cache.invalidate('other');
  finish('stale');
  t.is(await slow, 'stale', 'its callers still get what it read');
  t.is(await s.cache.get('other', s.read), 'v2', 'but the next get reads again');
});

test('a TTL of 0 remembers nothing', async (t) => {
  const s = setup({ ttlMs: 0 });
  await s.cache.get('k', s.read);
  await s.cache.get('k', s.read);
  t.is(s.reads.length, 2);
});
