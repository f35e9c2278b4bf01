import test from 'ava';
import { sql } from 'kysely';
import { InstanceKeys } from '../../shared/auth/instance-keys.ts';
import { startSession } from '../../shared/auth/sessions.ts';
import { issueApiKey } from '../../shared/tenancy/provision.ts';
import { apiClient, type Method } from '../../shared/testing/http-client.ts';
import {
  EXPECTED_ACCESS,
  PRINCIPAL_LETTERS,
  OWN_SESSION_ROUTES,
  REQUESTS,
  UNAUTHENTICATED,
  servedRoutes,
  tenantFixtures,
  tenantPrincipals,
  type Fixtures,
} from '../../ops/testing/manage-fixtures.ts';
import { sdkBatch } from '../../ops/testing/sdk-batch.ts';
import { useStack } from '../../ops/testing/stack.ts';

const stack = useStack(test, { processor: false });
const api = apiClient(stack);
let fx: Fixtures;
const credentials: Record<string, string> = {};

test.serial.before(async () => {
  const { tenant } = stack;
  const db = stack.infra.database.db;
  // Enterprise (tenantPrincipals): no site limit in the way of the site routes' successes.
  Object.assign(credentials, await tenantPrincipals(stack, tenant));
  fx = tenantFixtures(stack, tenant);
  const key = async (scopes: string[]) =>
    (await issueApiKey(db, { orgId: tenant.orgId, siteId: tenant.siteId, type: 'secret', scopes })).key;
  Object.assign(credentials, {
    R: await key(['query:read']),
    W: await key(['webhook:write']),
    P: tenant.publishableKey,
  });
});

const split = (route: string) => route.split(' ') as [Method, string];

test('every authenticated route the app serves has a request builder and an expected row', (t) => {
  const authenticated = servedRoutes(stack).filter((r) => !UNAUTHENTICATED.has(r) && !OWN_SESSION_ROUTES.has(r));
  t.deepEqual(
    authenticated,
    Object.keys(REQUESTS).sort(),
    'add the route to REQUESTS in ops/testing/manage-fixtures.ts',
  );
  t.deepEqual(
    authenticated,
    Object.keys(EXPECTED_ACCESS).sort(),
    'add the route to EXPECTED_ACCESS in ops/testing/manage-fixtures.ts',
  );
});

test.serial(
  'role × route and key type/scope × route: the full table of who gets through (2xx) and who gets 403',
  async (t) => {
    const actual: Record<string, string> = {};
    for (const route of Object.keys(REQUESTS).sort()) {
      const [method] = split(route);
      let through = '';
      const odd: string[] = [];
      for (const letter of PRINCIPAL_LETTERS) {
        const req = await REQUESTS[route](fx);
        const res = await api(method, req.path, { token: credentials[letter], body: req.body });
        if (res.status >= 200 && res.status < 300) through += letter;
        else if (res.status !== 403 || res.body?.error?.code !== 'forbidden')
          odd.push(`${letter} ${res.status} ${res.text.slice(0, 160)}`);
      }
      actual[route] = odd.length ? `${through} | ${odd.join(' | ')}` : through;
    }
    t.deepEqual(actual, EXPECTED_ACCESS);
  },
);

test.serial('no credential, a malformed header or an expired token: 401 on every authenticated route', async (t) => {
  // A live session whose token ran out an hour ago.
  const keys = new InstanceKeys(stack.infra.database.db, stack.config);
  const expired = (
    await startSession(
      stack.infra.database.db,
      keys,
      { userId: stack.tenant.owner.userId, orgId: stack.tenant.orgId },
      { tokenTtlSec: 60, sessionMaxSec: 86_400 },
      new Date(Date.now() - 3600_000),
    )
  ).token;
  const odd: string[] = [];
  for (const route of Object.keys(REQUESTS).sort()) {
    const [method] = split(route);
    const req = await REQUESTS[route](fx);
    for (const [what, headers] of [
      ['none', {}],
      ['malformed', { authorization: 'Basic b3duZXI6cHc=' }],
      ['expired', { authorization: `Bearer ${expired}` }],
    ] as const) {
      const res = await api(method, req.path, { body: req.body, headers });
      if (res.status !== 401 || res.body?.error?.code !== 'unauthorized') odd.push(`${route} ${what}: ${res.status}`);
    }
  }
  t.deepEqual(odd, []);
});

test.serial('forged, unknown, revoked and orphaned credentials are 401', async (t) => {
  const { tenant } = stack;
  const path = `/v1/manage/alert-rules?site_id=${tenant.siteId}`;
  const [header, payload] = tenant.owner.token.split('.');
  const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
  const cases: Record<string, string> = {
    'alg none': `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`,
    'wrong signature': `${header}.${payload}.${Buffer.alloc(32, 7).toString('base64url')}`,
    'claims changed after signing': `${header}.${b64({ ...claims, org: crypto.randomUUID() })}.${tenant.owner.token.split('.')[2]}`,
    'unknown key': `svc_sec_${'A'.repeat(32)}`,
  };
  for (const [what, token] of Object.entries(cases)) {
    const res = await api('GET', path, { token });
    t.is(res.status, 401, what);
    t.is(res.body.error.code, 'unauthorized', what);
  }
  // A removed member's token stops working at once, whatever its expiry.
  const leaver = await stack.newUser(tenant, 'member');
  t.is((await api('GET', path, { token: leaver.token })).status, 200);
  await sql`delete from memberships where user_id = ${leaver.userId}`.execute(stack.infra.database.db);
  t.is((await api('GET', path, { token: leaver.token })).status, 401);
});

test.serial('a revoked key is refused at once: on the API and (its cache dropped) on ingest', async (t) => {
  const { tenant } = stack;
  const made = await api('POST', '/v1/manage/keys', {
    token: tenant.owner.token,
    body: { site_id: tenant.siteId, key_type: 'secret', scopes: ['query:read'] },
  });
  const read = () => api('GET', `/v1/query/scores?site_id=${tenant.siteId}`, { token: made.body.data.key });
  t.is((await read()).status, 200);
  const revoked = await api('DELETE', `/v1/manage/keys/${made.body.data.id}`, { token: tenant.owner.token });
  t.is(revoked.status, 200);
  t.truthy(revoked.body.data.revoked_at);
  t.is((await read()).status, 401);

  const pub = await api('POST', '/v1/manage/keys', {
    token: tenant.owner.token,
    body: { site_id: tenant.siteId, key_type: 'publishable', scopes: ['ingest:write'] },
  });
  const ingest = () => api('POST', '/v1/ingest', { token: pub.body.data.key, body: sdkBatch() });
  t.is((await ingest()).status, 202, "the key is now in ingest's cache");
  await api('DELETE', `/v1/manage/keys/${pub.body.data.id}`, { token: tenant.owner.token });
  t.is((await ingest()).status, 401);
});

test.serial('a publishable key works on ingest only; an MCP key only reads', async (t) => {
  const { tenant } = stack;
  const pub = await api('GET', `/v1/query/scores?site_id=${tenant.siteId}`, { token: tenant.publishableKey });
  t.is(pub.status, 403);
  t.regex(pub.body.error.message, /ingest/);
  const mcpWrite = await api('POST', '/v1/annotations', { token: credentials.C, body: { message: 'x' } });
  t.is(mcpWrite.status, 403);
  t.is((await api('GET', `/v1/query/scores?site_id=${tenant.siteId}`, { token: credentials.C })).status, 200);
});
