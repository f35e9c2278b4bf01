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
