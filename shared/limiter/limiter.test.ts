import test from 'ava';
import { MemoryRateLimiter } from './limiter.ts';

test('sliding log: exactly `limit` hits in any window, no double allowance at a boundary', async (t) => {
  const now = { t: 0 };
  const l = new MemoryRateLimiter({ now: () => now.t });
  now.t = 59_000;
  for (let i = 0; i < 5; i++) t.true((await l.hit('k', 5, 60_000)).allowed);
  const refused = await l.hit('k', 5, 60_000);
  t.false(refused.allowed);
  t.is(refused.remaining, 0);
  t.is(refused.retryAfterSec, 60);
  // A fixed window would reset at 60 s and allow 5 more: the sliding log does not.
  now.t = 61_000;
  t.false((await l.hit('k', 5, 60_000)).allowed);
  now.t = 119_001;
  t.true((await l.hit('k', 5, 60_000)).allowed);
  t.true((await l.hit('other', 5, 60_000)).allowed, 'keys are independent');
});
