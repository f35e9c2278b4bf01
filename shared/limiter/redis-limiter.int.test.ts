import test from 'ava';
import { RedisRateLimiter } from './redis-limiter.ts';
import { createLogger } from '../logger.ts';
import { testServices, uniqueTestId } from '../testing/services.ts';

const log = createLogger('silent');

test('the Redis limiter allows exactly the limit across replicas sharing Redis, then answers Retry-After', async (t) => {
  const prefix = `test:${uniqueTestId()}:`;
  const a = new RedisRateLimiter(testServices.redisUrl, log, prefix);
  const b = new RedisRateLimiter(testServices.redisUrl, log, prefix);
  t.teardown(async () => {
    await a.redis.del(`${prefix}k`).catch(() => {});
    await a.close();
    await b.close();
  });
  await Promise.all([a.ready(), b.ready()]);
  const results = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).hit('k', 20, 60_000)));
  t.is(results.filter((r) => r.allowed).length, 20);
  const refused = results.find((r) => !r.allowed)!;
  t.true(refused.retryAfterSec >= 1 && refused.retryAfterSec <= 60);
  t.is(refused.remaining, 0);
});

test('while Redis is unreachable the limiter degrades to a per-process limit instead of failing', async (t) => {
  const l = new RedisRateLimiter('redis://127.0.0.1:1', log, `test:${uniqueTestId()}:`);
  t.teardown(() => l.close());
  const r = await l.hit('k', 2, 60_000);
  t.true(r.allowed);
  await l.hit('k', 2, 60_000);
  t.false((await l.hit('k', 2, 60_000)).allowed);
});

test('hits of one event-loop turn share one Redis call and answer exactly as one-by-one hits would', async (t) => {
  const prefix = `test:${uniqueTestId()}:`;
  const l = new RedisRateLimiter(testServices.redisUrl, log, prefix);
  t.teardown(async () => {
    await l.redis.del(`${prefix}a`, `${prefix}b`).catch(() => {});
    await l.close();
  });
  await l.ready();
  const before = l.roundTrips;
  // 25 hits on a (limit 10) and 4 on b (limit 5), all issued in the same turn.
  const [a, b] = await Promise.all([
    Promise.all(Array.from({ length: 25 }, () => l.hit('a', 10, 60_000))),
    Promise.all(Array.from({ length: 4 }, () => l.hit('b', 5, 60_000))),
  ]);
  t.is(l.roundTrips - before, 1);
  t.deepEqual(
    a.slice(0, 10).map((d) => d.remaining),
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
  );
  t.true(a.slice(0, 10).every((d) => d.allowed && d.resetSec >= 59 && d.resetSec <= 60));
  t.true(a.slice(10).every((d) => !d.allowed && d.remaining === 0 && d.retryAfterSec >= 59 && d.retryAfterSec <= 60));
  t.deepEqual(
    b.map((d) => [d.allowed, d.remaining]),
    [
      [true, 4],
      [true, 3],
      [true, 2],
      [true, 1],
    ],
  );
  // The next turn continues from the stored log: b has one hit left, a none.
  const [b5, b6, a26] = await Promise.all([l.hit('b', 5, 60_000), l.hit('b', 5, 60_000), l.hit('a', 10, 60_000)]);
  t.deepEqual([b5.allowed, b5.remaining, b6.allowed, a26.allowed], [true, 0, false, false]);
});
