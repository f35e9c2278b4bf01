import test from 'ava';
import type Koa from 'koa';
import { MemoryRateLimiter } from '../../shared/limiter/limiter.ts';
import { RateLimitedError } from '../../shared/errors.ts';
import type { Principal } from './auth.ts';
import { SurfaceLimits } from './rate-limit.ts';

const fakeCtx = (query: Record<string, string> = {}) => {
  const headers: Record<string, string> = {};
  return { ctx: { query, set: (k: string, v: string) => void (headers[k] = v) } as unknown as Koa.Context, headers };
};
const key = (siteId: string): Principal => ({
  kind: 'key',
  keyId: 'k',
  orgId: 'org-1',
  siteId,
  keyType: 'secret',
  scopes: ['query:read'],
  siteIds: new Set([siteId]),
  label: 'svc_sec_…',
});

/** The surface limits with a memory limiter, the guide surface's budget `guidePerMin` and the others' defaults. */
const surfaceLimits = (guidePerMin: number) =>
  new SurfaceLimits(new MemoryRateLimiter(), {
    readPerMin: 100,
    managePerMin: 30,
    guidePerMin,
    authPerMin: 20,
    loginPerAccount: 10,
    unauthPerMin: 60,
  });

test('guide surface: 200 requests per minute per site, counted apart for each site and apart from reads', async (t) => {
  const limits = surfaceLimits(200);
  for (let i = 0; i < 200; i++) await limits.enforce(fakeCtx().ctx, 'guide', key('site-a'));
  const over = fakeCtx();
  const err = await t.throwsAsync(limits.enforce(over.ctx, 'guide', key('site-a')), { instanceOf: RateLimitedError });
  t.true(err!.retryAfterSec! >= 1);
  t.is(over.headers['RateLimit-Limit'], '200');
  t.is(over.headers['RateLimit-Remaining'], '0');
  t.is(over.headers['RateLimit-Policy'], '200;w=60');
  await t.notThrowsAsync(limits.enforce(fakeCtx().ctx, 'guide', key('site-b')), 'another site of the same org');
  await t.notThrowsAsync(limits.enforce(fakeCtx().ctx, 'read', key('site-a')), 'reads have their own budget');
});

test("a user's guide requests count against the site named in the query, when it is theirs", async (t) => {
  const limits = surfaceLimits(1);
  const user: Principal = {
    kind: 'user',
    userId: 'u',
    email: 'a@b.c',
    orgId: 'org-1',
    role: 'viewer',
    siteIds: new Set(['s1', 's2']),
    label: 'a@b.c',
  };
  await limits.enforce(fakeCtx({ site_id: 's1' }).ctx, 'guide', user);
  await t.notThrowsAsync(limits.enforce(fakeCtx({ site_id: 's2' }).ctx, 'guide', user));
  await t.throwsAsync(limits.enforce(fakeCtx({ site_id: 's1' }).ctx, 'guide', user), { instanceOf: RateLimitedError });
});
