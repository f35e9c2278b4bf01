import test from 'ava';
import { sql } from 'kysely';
import { apiClient } from '../../shared/testing/http-client.ts';
import { useStack } from '../testing/stack.ts';

/** Issue 30: limits that heal (N3), the last 500s (N5), sign-ins audited (N6). */
const env = { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' };
const stack = useStack(test, { processor: false, env });
const embedded = useStack(test, { processor: false, embedded: true, env });
const api = apiClient(stack);

/** A bound on what one org or site may hold, and how the test makes and deletes one thing it counts. */
interface Bound {
  what: string;
  /** How many more fit. */
  room: number;
  /** POST here makes one; DELETE `${deletePath ?? path}/<id>` removes it. */
  path: string;
  deletePath?: string;
  body: () => object;
  /** The made thing's id in the POST's `data`. */
  id: (data: any) => string;
  /** The credential that makes them (default: the owner's, which also deletes them). */
  createToken?: string;
}

/** Runs `f` over 0..n-1, `width` at a time, and answers the results in order. */
async function inParallel<T>(n: number, width: number, f: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let from = 0; from < n; from += width)
    out.push(...(await Promise.all(Array.from({ length: Math.min(width, n - from) }, (_, k) => f(from + k)))));
  return out;
}

/**
 * Fills a bound, deletes everything it made, and fills it again: the bound counts only what still exists. The
 * creations run 8 at a time (the bound locks its parent row, so racing creations must still stop exactly at it).
 */
async function fillDeleteRefill(t: import('ava').ExecutionContext, token: string, b: Bound) {
  const create = async () => {
    const r = await api('POST', b.path, { token: b.createToken ?? token, body: b.body() });
    return { status: r.status, id: b.id(r.body?.data) };
  };
  for (let round = 0; round < 2; round++) {
    const made = await inParallel(b.room, 8, async (i) => {
      const r = await create();
      t.is(r.status, 201, `${b.what}: round ${round} #${i}`);
      return r.id;
    });
    const over = await create();
    t.is(over.status, 429, `${b.what}: one past the bound`);
    const removed = await inParallel(made.length, 8, (i) =>
      api('DELETE', `${b.deletePath ?? b.path}/${made[i]}`, { token }).then((r) => r.status),
    );
    removed.forEach((status, i) => t.is(status, 200, `${b.what}: delete ${made[i]}`));
  }
}

test('N3: webhooks, keys, alert rules, invitations and sites each heal: fill, delete all, create again', async (t) => {
  // About 2,000 requests against the real bounds (the spec's): minutes on a loaded machine.
  t.timeout(300_000);
  const tenant = await stack.newTenant();
  const token = tenant.owner.token;
  // A key with only webhook:write fills the org's 50 endpoints (the reported case); the owner then deletes them.
  const hookKey = await api('POST', '/v1/manage/keys', {
    token,
    body: { site_id: tenant.siteId, key_type: 'secret', scopes: ['webhook:write'] },
  });
  t.is(hookKey.status, 201, hookKey.text);
  let n = 0;
  const bounds: Bound[] = [
    {
      what: 'webhooks',
      room: 50,
      path: '/v1/manage/webhooks',
      createToken: hookKey.body.data.key,
      body: () => ({ org_id: tenant.orgId, site_id: tenant.siteId, url: 'http://127.0.0.1:9/hook' }),
      id: (d) => d?.endpoint?.id,
    },
    // Keys: the site's own two plus the webhook key above count; 47 more fit.
    {
      what: 'keys',
      room: 47,
      path: '/v1/manage/keys',
      body: () => ({ site_id: tenant.siteId, key_type: 'secret', scopes: ['query:read'] }),
      id: (d) => d?.id,
    },
    {
      what: 'alert rules',
      room: 200,
      path: '/v1/manage/alert-rules',
      body: () => ({
        site_id: tenant.siteId,
        name: 'Budget',
        trigger_type: 'budget',
        threshold: 0,
        channels: ['webhook'],
      }),
      id: (d) => d?.id,
    },
    {
      what: 'invitations',
      room: 200,
      path: '/v1/manage/members',
      body: () => ({ org_id: tenant.orgId, email: `invitee-${++n}@test.example`, role: 'member' }),
      id: (d) => d?.invitation?.id,
    },
    // Sites: the pro plan's 10, one of which the tenant has.
    {
      what: 'sites',
      room: 9,
      path: '/v1/manage/site',
      body: () => ({ org_id: tenant.orgId, name: 'more', url: 'https://more.example' }),
      id: (d) => d?.site?.id,
    },
  ];
  for (const b of bounds) await fillDeleteRefill(t, token, b);
  const listed = await api('GET', `/v1/manage/webhooks?org_id=${tenant.orgId}`, { token });
  t.is(listed.status, 200);
});

for (const kind of ['postgres', 'embedded'] as const) {
  test(`N5 ${kind}: year 0000 in annotations and the CSV export is a 400 naming the field`, async (t) => {
    const s = kind === 'postgres' ? stack : embedded;
    const call = apiClient(s.baseUrl);
    const { siteId, secretKey } = s.tenant;
    for (const at of ['0000-06-01T00:00:00Z', '0001-01-01T00:30:00+01:00']) {
      const a = await call('POST', '/v1/annotations', {
        token: secretKey,
        body: { message: 'deploy', occurred_at: at },
      });
      t.is(a.status, 400, `${at}: ${a.text}`);
      t.is(a.body.error.details[0].path, 'occurred_at');
      for (const param of ['from', 'to']) {
        const e = await call(
          'GET',
          `/v1/query/export/events.csv?site_id=${siteId}&${param}=${encodeURIComponent(at)}`,
          { token: secretKey },
        );
        t.is(e.status, 400, `${param}=${at}: ${e.text}`);
        t.is(e.body.error.details[0].path, param);
      }
    }
    const ok = await call('POST', '/v1/annotations', {
      token: secretKey,
      body: { message: 'deploy', occurred_at: '0001-01-01T00:00:00Z' },
    });
    t.is(ok.status, 201, ok.text);
  });

  test(`N5 ${kind}: an issue severity the float column cannot hold (5e-324) is stored rounded, never a 500`, async (t) => {
    const s = kind === 'postgres' ? stack : embedded;
    const call = apiClient(s.baseUrl);
    const { siteId } = s.tenant;
    const db = s.infra.database.db;
    const id = crypto.randomUUID();
    await sql`insert into ux_issues (id, site_id, page, cluster_selector, selector, signal_type, title, hypothesis, signal_count, affected_sessions, severity, first_signal_at, last_signal_at)
      values (${id}, ${siteId}, '/checkout', '#pay', '#pay', 'rage_click', 'Rage clicks on #pay', 'h', 3, 2, 40, now(), now())`.execute(
      db,
    );
    for (const severity of [5e-324, 1e-40, 99.999999]) {
      const r = await call('PATCH', `/v1/manage/issues/${id}`, { token: s.tenant.owner.token, body: { severity } });
      t.is(r.status, 200, `${severity}: ${r.text}`);
    }
    const r = await call('PATCH', `/v1/manage/issues/${id}`, {
      token: s.tenant.owner.token,
      body: { severity: 5e-324 },
    });
    t.is(r.body.data.severity, 0);
  });
}

test("N6: sign-ins, failed sign-ins (never the password) and sign-outs are audited in the account's orgs; the audit route filters by actor and action", async (t) => {
  const tenant = await stack.newTenant();
  const admin = await stack.newUser(tenant, 'admin');
  const owner = tenant.owner.token;
  const wrong = await api('POST', '/v1/auth/login', { body: { email: admin.email, password: 'not-the-password-123' } });
  t.is(wrong.status, 401);
  const login = await api('POST', '/v1/auth/login', { body: { email: admin.email, password: admin.password } });
  t.is(login.status, 200, login.text);
  t.is((await api('POST', '/v1/auth/logout', { token: login.body.data.token })).status, 200);
  const changed = await api('POST', '/v1/auth/password', {
    token: admin.token,
    body: { current_password: admin.password, new_password: 'a-new-password-456' },
  });
  t.is(changed.status, 200, changed.text);

  const byAdmin = await api('GET', `/v1/query/audit?org_id=${tenant.orgId}&actor=${encodeURIComponent(admin.email)}`, {
    token: owner,
  });
  t.is(byAdmin.status, 200, byAdmin.text);
  t.deepEqual(
    byAdmin.body.data.entries.map((e: { action: string }) => e.action),
    ['user.password_change', 'auth.logout', 'auth.login', 'auth.login_failed'],
  );
  const failed = byAdmin.body.data.entries[3];
  t.like(failed, {
    actor_id: admin.userId,
    target_id: admin.userId,
    summary: { reason: 'wrong password', ip: '127.0.0.1' },
  });
  t.false(JSON.stringify(byAdmin.body).includes('not-the-password-123'), 'the password tried is never recorded');

  const logins = await api('GET', `/v1/query/audit?org_id=${tenant.orgId}&action=auth.login`, { token: owner });
  t.deepEqual(
    logins.body.data.entries.map((e: { actor: string }) => e.actor),
    [admin.email],
  );
  const auth = await api('GET', `/v1/query/audit?org_id=${tenant.orgId}&action=auth.*`, { token: owner });
  t.deepEqual(
    auth.body.data.entries.map((e: { action: string }) => e.action),
    ['auth.logout', 'auth.login', 'auth.login_failed'],
  );
  const byId = await api('GET', `/v1/query/audit?org_id=${tenant.orgId}&actor=${admin.userId}&action=auth.logout`, {
    token: owner,
  });
  t.is(byId.body.data.entries.length, 1);
  const bad = await api('GET', `/v1/query/audit?org_id=${tenant.orgId}&action=DROP%20TABLE`, { token: owner });
  t.is(bad.status, 400);
  t.is(bad.body.error.details[0].path, 'action');
  // Another org never sees them.
  const other = await stack.newTenant();
  t.is(
    (await api('GET', `/v1/query/audit?org_id=${other.orgId}&action=auth.*`, { token: other.owner.token })).body.data
      .entries.length,
    0,
  );
});
