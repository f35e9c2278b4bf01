import test from 'ava';
import { sql } from 'kysely';
import { loadConfig } from '../../shared/config.ts';
import { createLogger } from '../../shared/logger.ts';
import { RedisRateLimiter } from '../../shared/limiter/redis-limiter.ts';
import { testServices } from '../../shared/testing/services.ts';
import { apiClient } from '../../shared/testing/http-client.ts';
import { sdkBatch } from '../../ops/testing/sdk-batch.ts';
import { startTestStack, useStack } from '../../ops/testing/stack.ts';

/**
 * The spec's limits, as configured by default (ingest's 10,000 scaled down to 5: the same code path, per key);
 * sessions counted afresh on every ingest (no cache).
 */
const SPEC_LIMITS = {
  READ_RATE_LIMIT_PER_MIN: '100',
  WRITE_RATE_LIMIT_PER_MIN: '30',
  AUTH_RATE_LIMIT_PER_MIN: '20',
  INGEST_RATE_LIMIT_PER_MIN: '5',
  QUOTA_CACHE_TTL_MS: '0',
};

const stack = useStack(test, { processor: false, env: SPEC_LIMITS });
const api = apiClient(stack);

test("the defaults are the spec's limits", (t) => {
  const c = loadConfig({});
  t.deepEqual(
    [c.READ_RATE_LIMIT_PER_MIN, c.WRITE_RATE_LIMIT_PER_MIN, c.GUIDE_RATE_LIMIT_PER_MIN, c.INGEST_RATE_LIMIT_PER_MIN],
    [100, 30, 200, 10_000],
  );
});

test.serial(
  'write API: 30 requests per minute per org, the 31st is 429 with Retry-After; shared through Redis; other orgs unaffected',
  async (t) => {
    const tenant = await stack.newTenant();
    const usage = () => api('GET', `/v1/manage/usage?org_id=${tenant.orgId}`, { token: tenant.owner.token });
    // Another replica sharing Redis (same key prefix) has already taken 10 of this org's 30.
    const replica = new RedisRateLimiter(
      testServices.redisUrl,
      createLogger('silent'),
      `${stack.config.STREAM_PREFIX}:rl:`,
    );
    await replica.ready();
    for (let i = 0; i < 10; i++) t.true((await replica.hit(`manage:${tenant.orgId}`, 30, 60_000)).allowed);
    await replica.close();
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 20; i++) {
      last = await usage();
      statuses.push(last.status);
    }
    t.deepEqual(statuses, Array(20).fill(200));
    t.is(last!.headers.get('ratelimit-limit'), '30');
    t.is(last!.headers.get('ratelimit-remaining'), '0');
    const over = await usage();
    t.is(over.status, 429);
    t.is(over.body.error.code, 'rate_limited');
    const retry = Number(over.headers.get('retry-after'));
    t.true(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
    t.is(over.headers.get('ratelimit-remaining'), '0');
    const write = await api('POST', '/v1/annotations', { token: tenant.secretKey, body: { message: 'x' } });
    t.is(write.status, 429, 'keys of the org share its budget');
    const other = await stack.newTenant();
    t.is((await api('GET', `/v1/manage/usage?org_id=${other.orgId}`, { token: other.owner.token })).status, 200);
  },
);

test.serial('read API: 100 requests per minute per org, then 429', async (t) => {
  const tenant = await stack.newTenant();
  const read = () => api('GET', `/v1/query/scores?site_id=${tenant.siteId}`, { token: tenant.secretKey });
  const statuses = new Set<number>();
  for (let i = 0; i < 100; i++) statuses.add((await read()).status);
  t.deepEqual([...statuses], [200]);
  const over = await read();
  t.is(over.status, 429);
  t.truthy(over.headers.get('retry-after'));
  t.is(
    (await api('GET', `/v1/query/audit?org_id=${tenant.orgId}`, { token: tenant.owner.token })).status,
    429,
    'users of the org share it',
  );
});

test.serial('ingest: the per-publishable-key limit answers 429 with Retry-After at exactly the limit', async (t) => {
  const tenant = await stack.newTenant();
  const statuses: number[] = [];
  let last;
  for (let i = 0; i < 6; i++)
    statuses.push((last = await api('POST', '/v1/ingest', { token: tenant.publishableKey, body: sdkBatch() })).status);
  t.deepEqual(statuses, [202, 202, 202, 202, 202, 429]);
  t.is(last!.body.error.code, 'rate_limited');
  t.truthy(last!.headers.get('retry-after'));
  t.is(
    (await api('POST', '/v1/ingest', { token: (await stack.newTenant()).publishableKey, body: sdkBatch() })).status,
    202,
    'another key is unaffected',
  );
});

test.serial('sign-in routes: 20 attempts per minute per client address', async (t) => {
  const statuses: number[] = [];
  for (let i = 0; i < 21; i++)
    statuses.push(
      (await api('POST', '/v1/auth/login', { body: { email: 'nobody@test.example', password: 'guess number ' + i } }))
        .status,
    );
  t.deepEqual(statuses, [...Array(20).fill(401), 429]);
});

test.serial(
  "plan limits: sites beyond the plan are refused; past the month's sessions ingest answers quota_exceeded until the 1st",
  async (t) => {
    const tenant = await stack.newTenant();
    const db = stack.infra.database.db;
    await db.updateTable('orgs').set({ plan: 'scale' }).where('id', '=', tenant.orgId).execute();
    const create = () =>
      api('POST', '/v1/manage/site', {
        token: tenant.owner.token,
        body: { org_id: tenant.orgId, name: 'more', url: 'https://more.example' },
      });
    // The test stack is under the write limit of 30 per minute: 4 creations here.
    for (let i = 0; i < 4; i++) t.is((await create()).status, 201);
    const sixth = await create();
    t.is(sixth.status, 429);
    t.is(sixth.body.error.code, 'quota_exceeded');
    t.deepEqual(sixth.body.error.details, { limit: 5, current: 5, plan: 'scale' });
    t.is(sixth.headers.get('retry-after'), null, 'waiting does not help: no Retry-After');

    // Enterprise with a custom allowance of 3 sessions; 2 this month, and one from last month that does not count.
    await db.updateTable('orgs').set({ plan: 'enterprise', session_limit: 3 }).where('id', '=', tenant.orgId).execute();
    const session = (id: string, at: Date) =>
      sql`insert into sessions (site_id, id, started_at, last_seen_at, device, first_page, last_page) values (${tenant.siteId}, ${id}, ${at}, ${at}, 'desktop', '/', '/')`.execute(
        db,
      );
    const now = new Date();
    await session('s1', now);
    await session('s2', now);
    await session('old', new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) - 1000));
    const ingest = () => api('POST', '/v1/ingest', { token: tenant.publishableKey, body: sdkBatch() });
    t.is((await ingest()).status, 202, '2 of 3 sessions used');
    await session('s3', now);
    const refused = await ingest();
    t.is(refused.status, 429);
    t.is(refused.body.error.code, 'quota_exceeded');
    t.is(refused.body.error.details.limit, 3);
    const resets = new Date(refused.body.error.details.resets_at);
    t.is(resets.getUTCDate(), 1);
    t.true(
      Math.abs(Number(refused.headers.get('retry-after')) - (resets.getTime() - Date.now()) / 1000) < 5,
      'Retry-After runs to the 1st',
    );
    const usage = await api('GET', `/v1/manage/usage?org_id=${tenant.orgId}`, { token: tenant.owner.token });
    t.like(usage.body.data, {
      plan: 'enterprise',
      limits: { sites: null, sessions_per_month: 3 },
      usage: { sites: 5, sessions_this_month: 3 },
      sessions_exceeded: true,
    });
    t.is(
      (await api('GET', `/v1/query/scores?site_id=${tenant.siteId}`, { token: tenant.secretKey })).status,
      200,
      'reads go on',
    );
  },
);

test.serial("a self-serve org has the Pro limits during its trial, then its own plan's", async (t) => {
  // (Sign-up itself is limited per address and an earlier test used that up: the org is set up directly.)
  const tenant = await stack.newTenant();
  const db = stack.infra.database.db;
  await db
    .updateTable('orgs')
    .set({ plan: 'grow', trial_ends_at: new Date(Date.now() + 3 * 24 * 3600 * 1000) })
    .where('id', '=', tenant.orgId)
    .execute();
  const create = (name: string) =>
    api('POST', '/v1/manage/site', {
      token: tenant.owner.token,
      body: { org_id: tenant.orgId, name, url: 'https://trial.example' },
    });
  t.is((await create('two')).status, 201, 'grow allows 1 site, the trial 10');
  const usage = await api('GET', `/v1/manage/usage?org_id=${tenant.orgId}`, { token: tenant.owner.token });
  t.like(usage.body.data, { plan: 'grow', trial_active: true, limits: { sites: 10, sessions_per_month: 1_000_000 } });

  await db
    .updateTable('orgs')
    .set({ trial_ends_at: new Date(Date.now() - 1000) })
    .where('id', '=', tenant.orgId)
    .execute();
  const after = await create('three');
  t.is(after.status, 429);
  t.deepEqual(after.body.error.details, { limit: 1, current: 2, plan: 'grow' });
});

test('while Redis is down the limits hold per process and nothing answers 5xx', async (t) => {
  // Port 1 refuses connections: the limiter falls back to its in-process sliding log.
  const down = await startTestStack({ processor: false, env: { ...SPEC_LIMITS, REDIS_URL: 'redis://127.0.0.1:1' } });
  try {
    const call = apiClient(down.baseUrl);
    const { tenant } = down;
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++)
      statuses.push(
        (await call('GET', `/v1/manage/alert-rules?site_id=${tenant.siteId}`, { token: tenant.owner.token })).status,
      );
    t.deepEqual(statuses, [...Array(30).fill(200), 429]);
    t.is((await call('POST', '/v1/ingest', { token: tenant.publishableKey, body: sdkBatch() })).status, 202);
  } finally {
    await down.stop();
  }
});
