import test from 'ava';
import { hashPassword } from '../../shared/auth/passwords.ts';
import { createMember } from '../../shared/tenancy/accounts.ts';
import { startSmtpSink, type ReceivedMail, type SmtpSink } from '../../shared/testing/smtp-sink.ts';
import { apiClient, type ApiCall } from '../../shared/testing/http-client.ts';
import { startTestStack, type TestStack } from '../testing/stack.ts';

/**
 * Issue 10 item 3: with SMTP configured an address is bound only once proven (a mailed token), signup answers the
 * same for taken and free addresses, invitations go to the address, and a squatted unverified account yields to
 * the address's proven owner. Mail goes to a real SMTP server on 127.0.0.1.
 */
let sink: SmtpSink;
let stack: TestStack;
let api: ApiCall;
test.before(async () => {
  sink = await startSmtpSink();
  stack = await startTestStack({
    processor: false,
    env: {
      SMTP_URL: sink.url,
      SMTP_FROM: 'Friction <friction@test.example>',
      PUBLIC_BASE_URL: 'https://friction.test.example',
    },
  });
  api = apiClient(stack.baseUrl);
});
test.after.always(async () => {
  await stack?.stop();
  await sink?.close();
});

const tokenIn = (m: ReceivedMail, prefix: string) => new RegExp(`\\b(${prefix}_[A-Za-z0-9_-]+)`).exec(m.text)?.[1];
const mailsTo = (email: string) => sink.messages.filter((m) => m.to.includes(email));
const users = (email: string) =>
  stack.infra.database.db.selectFrom('users').select(['id', 'email_verified_at']).where('email', '=', email).execute();

test.serial(
  'signup: nothing is bound until the mailed token comes back; then the account is verified and signed in',
  async (t) => {
    const email = 'new-owner@corp.example';
    const res = await api('POST', '/v1/auth/signup', {
      body: { email, password: 'correct horse battery', org_name: 'Corp' },
    });
    t.is(res.status, 202);
    t.deepEqual(res.body.data, { status: 'verification_sent', email });
    t.deepEqual(await users(email), [], 'no account yet: an unproven address blocks nobody');
    t.is((await api('POST', '/v1/auth/login', { body: { email, password: 'correct horse battery' } })).status, 401);
    const mail = await sink.waitFor((m) => m.to.includes(email));
    t.regex(mail.subject, /Confirm your email/);
    t.true(mail.text.includes('https://friction.test.example/v1/auth/verify-email'));
    const token = tokenIn(mail, 'evt')!;
    t.truthy(token);
    const verified = await api('POST', '/v1/auth/verify-email', { body: { token } });
    t.is(verified.status, 201, verified.text);
    t.like(verified.body.data, { user: { email }, org: { name: 'Corp', plan: 'grow' }, role: 'owner' });
    t.is(
      (await api('GET', `/v1/manage/members?org_id=${verified.body.data.org.id}`, { token: verified.body.data.token }))
        .status,
      200,
    );
    const [u] = await users(email);
    t.truthy(u.email_verified_at);
    t.is((await api('POST', '/v1/auth/verify-email', { body: { token } })).status, 404, 'a token works once');
    t.is((await api('POST', '/v1/auth/verify-email', { body: { token: 'evt_forged' } })).status, 404);
  },
);

test.serial(
  'signup answers identically for a taken address, which is mailed a notice instead of a token',
  async (t) => {
    const taken = stack.tenant.owner.email;
    await stack.infra.database.db
      .updateTable('users')
      .set({ email_verified_at: new Date() })
      .where('email', '=', taken)
      .execute();
    const free = 'someone-free@corp.example';
    const a = await api('POST', '/v1/auth/signup', {
      body: { email: taken, password: 'whatever long', org_name: 'X' },
    });
    const b = await api('POST', '/v1/auth/signup', { body: { email: free, password: 'whatever long', org_name: 'X' } });
    t.is(a.status, b.status);
    t.is(a.text.replace(taken, 'E'), b.text.replace(free, 'E'), 'same status, same body: no enumeration');
    const notice = await sink.waitFor((m) => m.to.includes(taken));
    t.regex(notice.subject, /tried to sign up/);
    t.is(tokenIn(notice, 'evt'), undefined, 'no token for a taken address');
    t.is((await users(taken)).length, 1);
  },
);

test.serial(
  'the squatting attack: an invitation is mailed (never shown to the inviter); a squatted unverified account yields to the proven owner',
  async (t) => {
    const victim = 'victim@corp.example';
    // The attacker's own org, where they are owner.
    const attackerOrg = await stack.newTenant();
    const invite = await api('POST', '/v1/manage/members', {
      token: attackerOrg.owner.token,
      body: { org_id: attackerOrg.orgId, email: victim, role: 'admin' },
    });
    t.is(invite.status, 201);
    t.is(invite.body.data.invite_token, null, 'the inviter never sees the token');
    t.true(invite.body.data.mailed);
    const invitationMail = await sink.waitFor((m) => m.to.includes(victim) && /invited/.test(m.subject));
    t.truthy(tokenIn(invitationMail, 'inv'));

    // An account squatted on the address before SMTP was configured (unverified), member of the attacker's org.
    const squatterPassword = 'attacker chosen pw';
    const squatterId = await createMember(stack.infra.database.db, {
      orgId: attackerOrg.orgId,
      email: victim,
      passwordHash: await hashPassword(squatterPassword, 1024),
      role: 'member',
    });
    const squatterLogin = await api('POST', '/v1/auth/login', { body: { email: victim, password: squatterPassword } });
    t.is(squatterLogin.status, 200);

    // The real owner signs up: the proof takes the address over.
    const signup = await api('POST', '/v1/auth/signup', {
      body: { email: victim, password: 'the real owner pw', org_name: 'Victim Co' },
    });
    t.is(signup.status, 202);
    const confirm = await sink.waitFor((m) => m.to.includes(victim) && /Confirm/.test(m.subject));
    t.regex(confirm.text, /never confirmed/, 'the mail warns that confirming takes an existing account over');
    const verified = await api('POST', '/v1/auth/verify-email', { body: { token: tokenIn(confirm, 'evt') } });
    t.is(verified.status, 201, verified.text);
    t.is(verified.body.data.user.id, squatterId, "the same account, now the proven owner's");
    t.is(
      (await api('GET', `/v1/manage/members?org_id=${attackerOrg.orgId}`, { token: squatterLogin.body.data.token }))
        .status,
      401,
      "the squatter's session ended",
    );
    t.is(
      (await api('POST', '/v1/auth/login', { body: { email: victim, password: squatterPassword } })).status,
      401,
      "the squatter's password is gone",
    );
    t.is(
      (
        await api('POST', '/v1/auth/login', {
          body: { email: victim, password: 'the real owner pw', org_id: attackerOrg.orgId },
        })
      ).status,
      401,
      'and the memberships it gathered',
    );
    t.is((await api('POST', '/v1/auth/login', { body: { email: victim, password: 'the real owner pw' } })).status, 200);

    // A genuine invitation to the now verified account needs its password.
    const genuine = await stack.newTenant();
    await api('POST', '/v1/manage/members', {
      token: genuine.owner.token,
      body: { org_id: genuine.orgId, email: victim, role: 'viewer' },
    });
    const mail = await sink.waitFor((m) => m.to.includes(victim) && m.text.includes(genuine.owner.email));
    const token = tokenIn(mail, 'inv');
    t.is((await api('POST', '/v1/auth/accept-invite', { body: { token, password: 'not the password' } })).status, 401);
    const joined = await api('POST', '/v1/auth/accept-invite', { body: { token, password: 'the real owner pw' } });
    t.is(joined.status, 201);
    t.is(joined.body.data.org.id, genuine.orgId);
  },
);

test.serial('a mailed invitation proves the address of a brand-new account', async (t) => {
  const email = 'fresh-invitee@corp.example';
  await api('POST', '/v1/manage/members', {
    token: stack.tenant.owner.token,
    body: { org_id: stack.tenant.orgId, email, role: 'member' },
  });
  const mail = await sink.waitFor((m) => m.to.includes(email));
  const joined = await api('POST', '/v1/auth/accept-invite', {
    body: { token: tokenIn(mail, 'inv'), password: 'fresh invitee pw' },
  });
  t.is(joined.status, 201);
  t.truthy((await users(email))[0].email_verified_at);
});

test.serial('at most 5 account mails per address per hour, and the answer does not change', async (t) => {
  const email = 'inbox-bombed@corp.example';
  const answers = [];
  for (let i = 0; i < 7; i++)
    answers.push(await api('POST', '/v1/auth/signup', { body: { email, password: 'whatever long', org_name: 'X' } }));
  t.deepEqual(
    answers.map((a) => a.status),
    Array(7).fill(202),
  );
  await sink.waitFor(() => mailsTo(email).length >= 5);
  t.is(mailsTo(email).length, 5);
});
