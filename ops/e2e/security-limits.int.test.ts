import test from 'ava';
import { apiClient } from '../../shared/testing/http-client.ts';
import { useStack } from '../testing/stack.ts';

/**
 * Issue 10 items 1 and 7: who the per-IP limits count against (trusted proxies only), the per-account sign-in
 * budget, the per-IP limit on requests without a valid credential, and /metrics protection.
 */
const LIMITS = { AUTH_RATE_LIMIT_PER_MIN: '5', LOGIN_ATTEMPTS_PER_ACCOUNT: '3', UNAUTH_RATE_LIMIT_PER_MIN: '10' };

const direct = useStack(test, { processor: false, env: LIMITS });
const proxied = useStack(test, {
  processor: false,
  env: { ...LIMITS, TRUSTED_PROXIES: '127.0.0.1,::1', METRICS_TOKEN: 'metrics-token-0123456789' },
});

let n = 0;
const spoofed = () => ({ 'x-forwarded-for': `198.51.100.${++n % 250}` });

test('without TRUSTED_PROXIES a spoofed X-Forwarded-For does not buy a fresh sign-in budget', async (t) => {
  const api = apiClient(direct.baseUrl);
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) {
    statuses.push(
      (
        await api('POST', '/v1/auth/login', {
          body: { email: `nobody${i}@test.example`, password: 'guess' },
          headers: spoofed(),
        })
      ).status,
    );
  }
  t.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429, 429]);
});

test('behind a trusted proxy each forwarded client has its own budget, but one account has 3 attempts per 15 minutes from anywhere', async (t) => {
  const api = apiClient(proxied.baseUrl);
  const victim = proxied.tenant.owner;
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++)
    statuses.push(
      (
        await api('POST', '/v1/auth/login', {
          body: { email: victim.email, password: `guess ${i}` },
          headers: spoofed(),
        })
      ).status,
    );
  t.deepEqual(statuses, [401, 401, 401, 429, 429], 'a botnet rotating addresses gets three guesses');
  const right = await api('POST', '/v1/auth/login', {
    body: { email: victim.email, password: victim.password },
    headers: spoofed(),
  });
  t.is(right.status, 429, 'no password is checked while the account is throttled (so the budget reveals nothing)');
  t.is(right.body.error.code, 'rate_limited');
  t.truthy(right.headers.get('retry-after'));
  const other = await proxied.newUser(proxied.tenant, 'member');
  t.is(
    (
      await api('POST', '/v1/auth/login', {
        body: { email: other.email, password: other.password },
        headers: spoofed(),
      })
    ).status,
    200,
    'other accounts sign in',
  );
  // One forwarded address: its own per-IP budget of 5.
  const one = { 'x-forwarded-for': '203.0.113.50' };
  const perIp: number[] = [];
  for (let i = 0; i < 6; i++)
    perIp.push(
      (await api('POST', '/v1/auth/login', { body: { email: `x${i}@test.example`, password: 'guess' }, headers: one }))
        .status,
    );
  t.deepEqual(perIp, [401, 401, 401, 401, 401, 429]);
  t.is(
    (
      await api('POST', '/v1/auth/login', {
        body: { email: 'y@test.example', password: 'guess' },
        headers: { 'x-forwarded-for': '203.0.113.51' },
      })
    ).status,
    401,
  );
});

test("accepting an invitation into an existing account counts against that account's sign-in budget", async (t) => {
  const api = apiClient(proxied.baseUrl);
  const other = await proxied.newTenant();
  const invitee = await proxied.newUser(other, 'member');
  const invite = await api('POST', '/v1/manage/members', {
    token: proxied.tenant.owner.token,
    body: { org_id: proxied.tenant.orgId, email: invitee.email, role: 'viewer' },
  });
  t.is(invite.status, 201);
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    statuses.push(
      (
        await api('POST', '/v1/auth/accept-invite', {
          body: { token: invite.body.data.invite_token, password: `guess number ${i}` },
          headers: spoofed(),
        })
      ).status,
    );
  }
  t.deepEqual(statuses, [401, 401, 401, 429], "the invitation's holder gets no more guesses than anyone");
});

test('requests without a valid credential are limited per address; valid credentials are not affected', async (t) => {
  const api = apiClient(direct.baseUrl);
  const path = `/v1/query/scores?site_id=${direct.tenant.siteId}`;
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++)
    statuses.push((await api('GET', path, { token: `svc_sec_${'A'.repeat(30)}${i}` })).status);
  t.deepEqual(statuses, [...Array(10).fill(401), 429, 429]);
  t.is((await api('GET', path)).status, 429, 'no credential at all counts too');
  t.is(
    (await api('GET', path, { token: direct.tenant.secretKey })).status,
    200,
    'a valid key from the same address still works',
  );
  const ingest = await api('POST', '/v1/ingest', { token: `svc_pub_${'B'.repeat(32)}`, body: { events: [] } });
  t.is(ingest.status, 429, 'ingest with an unknown key counts against the same budget');
});

test('/metrics: open to loopback without METRICS_TOKEN; with it, the token is required', async (t) => {
  t.is((await fetch(`${direct.baseUrl}/metrics`)).status, 200, 'loopback peer, no token configured');
  const viaProxy = await fetch(`${direct.baseUrl}/metrics`, { headers: { 'x-forwarded-for': '203.0.113.7' } });
  t.is(viaProxy.status, 403, 'a reverse proxy on the same host connects from loopback too: forwarded is not local');
  const api = apiClient(proxied.baseUrl);
  const none = await api('GET', '/metrics');
  t.is(none.status, 401);
  t.is(none.body.error.code, 'unauthorized');
  t.is((await api('GET', '/metrics', { token: 'metrics-token-wrong-000000' })).status, 401);
  const ok = await fetch(`${proxied.baseUrl}/metrics`, {
    headers: { authorization: 'Bearer metrics-token-0123456789' },
  });
  t.is(ok.status, 200);
  t.regex(await ok.text(), /# HELP/);
});
