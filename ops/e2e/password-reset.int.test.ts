import test from 'ava';
import { issuePasswordReset } from '../../shared/auth/password-reset.ts';
import { startSmtpSink, type SmtpSink } from '../../shared/testing/smtp-sink.ts';
import { apiClient } from '../../shared/testing/http-client.ts';
import { startTestStack, type TestStack } from '../testing/stack.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { runFriction } from '../../shared/testing/processes.ts';

/** Issue 30 N9: password reset by mail (a real SMTP server on 127.0.0.1) and, without SMTP, by the operator's command. */

let sink: SmtpSink;
let mailed: TestStack;
let plain: TestStack;
test.before(async () => {
  sink = await startSmtpSink();
  [mailed, plain] = await Promise.all([
    startTestStack({ processor: false, env: { SMTP_URL: sink.url, PUBLIC_BASE_URL: 'https://friction.test.example' } }),
    startTestStack({ processor: false }),
  ]);
});
test.after.always(async () => {
  await Promise.all([mailed?.stop(), plain?.stop()]);
  await sink?.close();
});

const tokenIn = (text: string) => /\b(prt_[A-Za-z0-9_-]+)/.exec(text)?.[1];

test('with SMTP: the same 202 for known and unknown addresses; a single-use token is mailed; resetting ends every session and is audited', async (t) => {
  const api = apiClient(mailed.baseUrl);
  const user = await mailed.newUser(mailed.tenant, 'admin');
  const login = await api('POST', '/v1/auth/login', { body: { email: user.email, password: user.password } });
  t.is(login.status, 200);
  const unknownEmail = `nobody-${Date.now()}@test.example`;
  const known = await api('POST', '/v1/auth/forgot-password', { body: { email: user.email.toUpperCase() } });
  const unknown = await api('POST', '/v1/auth/forgot-password', { body: { email: unknownEmail } });
  t.is(known.status, 202);
  t.is(known.text, unknown.text, 'same status, same body: no enumeration');
  const mail = await sink.waitFor((m) => m.to.includes(user.email));
  t.regex(mail.subject, /Reset your Friction password/);
  t.true(mail.text.includes('https://friction.test.example/v1/auth/reset-password'));
  const token = tokenIn(mail.text)!;
  t.truthy(token);

  t.is((await api('POST', '/v1/auth/reset-password', { body: { token, new_password: 'short' } })).status, 400);
  const reset = await api('POST', '/v1/auth/reset-password', {
    body: { token, new_password: 'a brand new passphrase' },
  });
  t.is(reset.status, 200, reset.text);
  t.deepEqual(reset.body.data, { reset: true, sessions_ended: 2 });
  for (const old of [user.token, login.body.data.token])
    t.is(
      (await api('GET', `/v1/manage/members?org_id=${mailed.tenant.orgId}`, { token: old })).status,
      401,
      'every session ended',
    );
  t.is(
    (await api('POST', '/v1/auth/login', { body: { email: user.email, password: user.password } })).status,
    401,
    'the old password is gone',
  );
  t.is(
    (await api('POST', '/v1/auth/login', { body: { email: user.email, password: 'a brand new passphrase' } })).status,
    200,
  );
  t.is(
    (await api('POST', '/v1/auth/reset-password', { body: { token, new_password: 'yet another passphrase' } })).status,
    404,
    'single use',
  );
  t.is(sink.messages.filter((m) => m.to.includes(unknownEmail)).length, 0, 'an unknown address gets nothing');

  const audit = await api('GET', `/v1/query/audit?org_id=${mailed.tenant.orgId}&action=user.password_reset`, {
    token: mailed.tenant.owner.token,
  });
  t.like(audit.body.data.entries[0], { actor: user.email, target_id: user.userId, summary: { sessions_ended: 2 } });

  // Short-lived: a token past its 30 minutes is refused; a newer token spends the older one.
  const db = mailed.infra.database.db;
  const resetWith = async (token: string, n: number) =>
    (await api('POST', '/v1/auth/reset-password', { body: { token, new_password: `a brand new passphrase ${n}` } }))
      .status;
  const stale = await issuePasswordReset(db, user.userId, new Date(Date.now() - 31 * 60_000));
  t.is(await resetWith(stale.token, 2), 404, 'expired');
  const first = await issuePasswordReset(db, user.userId, new Date());
  const second = await issuePasswordReset(db, user.userId, new Date());
  t.is(await resetWith(first.token, 3), 404, 'superseded');
  t.is(await resetWith(second.token, 3), 200);
});

test('with SMTP: at most 5 reset mails per address per hour, whatever the number of requests', async (t) => {
  const api = apiClient(mailed.baseUrl);
  const user = await mailed.newUser(mailed.tenant, 'member');
  for (let i = 0; i < 8; i++)
    t.is((await api('POST', '/v1/auth/forgot-password', { body: { email: user.email } })).status, 202);
  await eventually(async () => sink.messages.filter((m) => m.to.includes(user.email)).length >= 5, {
    timeoutMs: 20_000,
    what: 'five mails',
  });
  // The requests were answered before their mail work ran: an absence can only be shown by letting that work finish.
  await new Promise((r) => setTimeout(r, 1000));
  t.is(sink.messages.filter((m) => m.to.includes(user.email)).length, 5);
});

test('without SMTP: the route says an operator reset is needed (alike for every address); `friction users reset-password EMAIL` prints a one-time token', async (t) => {
  const api = apiClient(plain.baseUrl);
  const user = await plain.newUser(plain.tenant, 'member');
  const a = await api('POST', '/v1/auth/forgot-password', { body: { email: user.email } });
  const b = await api('POST', '/v1/auth/forgot-password', { body: { email: 'nobody@test.example' } });
  t.is(a.status, 202);
  t.is(a.text, b.text);
  t.is(a.body.data.status, 'operator_reset_required');

  const env = { DATABASE_URL: plain.databaseUrl!, PUBLIC_BASE_URL: 'https://ops.test.example' };
  const run = await runFriction(['users', 'reset-password', user.email], env);
  t.is(run.code, 0, run.stderr);
  t.true(run.stdout.includes('https://ops.test.example/v1/auth/reset-password'));
  const token = tokenIn(run.stdout)!;
  const reset = await api('POST', '/v1/auth/reset-password', { body: { token, new_password: 'operator given pass' } });
  t.is(reset.status, 200, reset.text);
  t.is((await api('GET', `/v1/manage/members?org_id=${plain.tenant.orgId}`, { token: user.token })).status, 401);
  t.is(
    (await api('POST', '/v1/auth/reset-password', { body: { token, new_password: 'operator given pass 2' } })).status,
    404,
  );

  const missing = await runFriction(['users', 'reset-password', 'nobody@test.example'], env);
  t.not(missing.code, 0);
  t.regex(missing.stderr, /^friction: no account has the address nobody@test\.example/);
});
