import test from 'ava';
import { loadConfig } from '../../shared/config.ts';
import { apiClient } from '../../shared/testing/http-client.ts';
import { useStack } from '../testing/stack.ts';

/** Issue 10 item 4: sessions end (logout, password change), tokens are short-lived and renewed. */
const stack = useStack(test, { processor: false, env: { SESSION_MAX_SECONDS: '600' } });
const api = apiClient(stack);

const login = async (email: string, password: string) => {
  const res = await api('POST', '/v1/auth/login', { body: { email, password } });
  return (res.body?.data ?? undefined) as { token: string; expires_at: string; session_expires_at: string } | undefined;
};

test('a token lives 15 minutes by default and renews within its session, never past it', async (t) => {
  t.is(loadConfig({}).JWT_TTL_SECONDS, 900);
  const user = await stack.newUser(stack.tenant, 'member');
  const s = (await login(user.email, user.password))!;
  const life = (Date.parse(s.expires_at) - Date.now()) / 1000;
  t.true(life > 580 && life <= 600, `token life ${life}s: 900 s capped by SESSION_MAX_SECONDS=600`);
  t.is(s.expires_at, s.session_expires_at);
  const renewed = await api('POST', '/v1/auth/refresh', { token: s.token });
  t.is(renewed.status, 200);
  t.is(renewed.body.data.session_expires_at, s.session_expires_at, 'the same session');
  t.true(
    Date.parse(renewed.body.data.expires_at) <= Date.parse(s.session_expires_at),
    'capped at the session end (600 s < 900 s)',
  );
  t.is(
    (await api('GET', `/v1/manage/alert-rules?site_id=${stack.tenant.siteId}`, { token: renewed.body.data.token }))
      .status,
    200,
  );
  t.is(
    (await api('POST', '/v1/auth/refresh', { token: stack.tenant.secretKey })).status,
    403,
    'keys have no session to renew',
  );
});

test('logout: every token of that session is refused at once; other sessions go on', async (t) => {
  const user = await stack.newUser(stack.tenant, 'admin');
  const a = (await login(user.email, user.password))!;
  const b = (await login(user.email, user.password))!;
  const a2 = (await api('POST', '/v1/auth/refresh', { token: a.token })).body.data.token as string;
  const read = (token: string) => api('GET', `/v1/manage/members?org_id=${stack.tenant.orgId}`, { token });
  t.is((await read(a.token)).status, 200);
  const out = await api('POST', '/v1/auth/logout', { token: a.token });
  t.is(out.status, 200);
  t.deepEqual(out.body.data, { logged_out: true });
  for (const token of [a.token, a2]) {
    const res = await read(token);
    t.is(res.status, 401);
    t.regex(res.body.error.message, /session has ended/);
  }
  t.is((await api('POST', '/v1/auth/refresh', { token: a2 })).status, 401, 'an ended session cannot be renewed');
  t.is((await read(b.token)).status, 200, 'the other login is untouched');
});

test("password change: needs the current password, ends every other session, keeps the caller's", async (t) => {
  const user = await stack.newUser(stack.tenant, 'viewer');
  const here = (await login(user.email, user.password))!;
  const elsewhere = (await login(user.email, user.password))!;
  const read = (token: string) => api('GET', `/v1/query/scores?site_id=${stack.tenant.siteId}`, { token });
  const wrong = await api('POST', '/v1/auth/password', {
    token: here.token,
    body: { current_password: 'not it', new_password: 'a brand new passphrase' },
  });
  t.is(wrong.status, 401);
  t.is((await read(elsewhere.token)).status, 200, 'a wrong current password changes nothing');
  const short = await api('POST', '/v1/auth/password', {
    token: here.token,
    body: { current_password: user.password, new_password: 'short' },
  });
  t.is(short.status, 400);
  t.is(short.body.error.details[0].path, 'new_password');
  const changed = await api('POST', '/v1/auth/password', {
    token: here.token,
    body: { current_password: user.password, new_password: 'a brand new passphrase' },
  });
  t.is(changed.status, 200);
  t.deepEqual(
    changed.body.data,
    { changed: true, other_sessions_ended: 2 },
    "the stack's own token and the other login",
  );
  t.is((await read(elsewhere.token)).status, 401);
  t.is((await read(user.token)).status, 401);
  t.is((await read(here.token)).status, 200, 'the session that changed it goes on');
  t.is(await login(user.email, user.password), undefined, 'the old password is refused');
  t.truthy(await login(user.email, 'a brand new passphrase'));
  const audit = await api('GET', `/v1/query/audit?org_id=${stack.tenant.orgId}`, { token: stack.tenant.owner.token });
  const entry = audit.body.data.entries.find((e: { action: string }) => e.action === 'user.password_change');
  t.truthy(entry);
  t.false(JSON.stringify(entry).includes('passphrase'), 'no password in the audit log');
});
