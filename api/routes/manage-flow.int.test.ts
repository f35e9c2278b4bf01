import test from 'ava';
import { useStack } from '../../ops/testing/stack.ts';
import { apiClient } from '../../shared/testing/http-client.ts';

const stack = useStack(test, { processor: false });
const api = apiClient(stack);

test.serial(
  'signup → site → invite → accept → rules, webhooks, keys: every write answers and lands in the audit log',
  async (t) => {
    const email = `founder-${Date.now()}@shop.example`;
    const signup = await api('POST', '/v1/auth/signup', {
      body: { email: email.toUpperCase(), password: 'correct horse battery', org_name: 'Shop Inc' },
    });
    t.is(signup.status, 201, signup.text);
    const { user, org, token } = signup.body.data;
    t.is(user.email, email, 'emails are stored lowercased');
    t.is(org.plan, 'grow');
    t.true(
      Math.abs(new Date(org.trial_ends_at).getTime() - Date.now() - 3 * 24 * 3600 * 1000) < 60_000,
      'a 3-day trial starts at signup',
    );

    const login = await api('POST', '/v1/auth/login', { body: { email, password: 'correct horse battery' } });
    t.is(login.status, 200);
    t.deepEqual(Object.keys(login.body.data).sort(), ['expires_at', 'session_expires_at', 'token']);

    const site = await api('POST', '/v1/manage/site', {
      token,
      body: { org_id: org.id, name: 'Shop', url: 'https://shop.example' },
    });
    t.is(site.status, 201, site.text);
    const siteId = site.body.data.site.id;
    t.regex(site.body.data.publishable_key, /^svc_pub_[A-Za-z0-9]{32}$/);
    t.regex(site.body.data.secret_key, /^svc_sec_[A-Za-z0-9]{32}$/);
    t.is(site.body.data.environment, 'production');
    const sdk = await api('GET', `/v1/manage/sdk-config?site_id=${siteId}`, { token });
    t.deepEqual(
      sdk.body.data.environments.map((e: { environment: string }) => e.environment),
      ['production'],
    );

    const second = await api('POST', '/v1/manage/site', {
      token,
      body: { org_id: org.id, name: 'Blog', url: 'https://blog.example' },
    });
    t.is(second.status, 201, 'during its trial a grow org has the Pro limits (10 sites)');

    const invite = await api('POST', '/v1/manage/members/invite', {
      token,
      body: { email: 'colleague@shop.example', role: 'member' },
    });
    t.is(invite.status, 201, invite.text);
    const accepted = await api('POST', '/v1/auth/accept-invite', {
      body: { token: invite.body.data.invite_token, password: 'another good one' },
    });
    t.is(accepted.status, 201, accepted.text);
    t.is(accepted.body.data.role, 'member');
    const memberToken = accepted.body.data.token;
    const reuse = await api('POST', '/v1/auth/accept-invite', {
      body: { token: invite.body.data.invite_token, password: 'another good one' },
    });
    t.is(reuse.status, 404, 'an invitation is used once');

    const ruleBody = {
      site_id: siteId,
      name: 'Checkout spike',
      trigger_type: 'spike',
      threshold: 20,
      page_pattern: '/checkout*',
      slack_channel: '#alerts',
      channels: ['slack', 'email'],
      enabled: true,
    };
    // This stack has no SMTP_URL: an email channel would accept the rule and fail every alert, so it is refused.
    const noMail = await api('POST', '/v1/alert-rules', { token: memberToken, body: ruleBody });
    t.is(noMail.status, 400, noMail.text);
    t.is(noMail.body.error.details[0].path, 'channels');
    t.regex(noMail.body.error.details[0].message, /SMTP_URL is not set/);
    const rule = await api('POST', '/v1/alert-rules', {
      token: memberToken,
      body: { ...ruleBody, channels: ['slack'] },
    });
    t.is(rule.status, 201, rule.text);
    const patched = await api('PATCH', `/v1/alert-rules/${rule.body.data.id}`, {
      token: memberToken,
      body: { channels: ['email'] },
    });
    t.is(patched.status, 400, 'nor added later');
    t.deepEqual(rule.body.data.config, { page_pattern: '/checkout*' });
    const hook = await api('POST', '/v1/manage/webhooks', {
      token,
      body: { org_id: org.id, url: 'https://hooks.shop.example/friction', description: 'ops' },
    });
    t.is(hook.status, 201, hook.text);
    t.regex(hook.body.data.signing_secret, /^whsec_/);
    const listed = await api('GET', `/v1/manage/webhooks?org_id=${org.id}`, { token });
    t.false(listed.text.includes(hook.body.data.signing_secret), 'the signing secret is shown once');
    const key = await api('POST', '/v1/manage/keys', {
      token,
      body: { site_id: siteId, key_type: 'mcp', scopes: ['mcp:read'] },
    });
    t.is(key.status, 201, key.text);
    t.regex(key.body.data.key, /^svc_mcp_/);

    const audit = await api('GET', `/v1/query/audit?org_id=${org.id}`, { token });
    t.is(audit.status, 200, audit.text);
    t.deepEqual(
      audit.body.data.entries.map((e: { action: string }) => e.action),
      [
        'key.create',
        'webhook.create',
        'alert_rule.create',
        'member.join',
        'member.invite',
        'site.create',
        'site.create',
        'auth.login',
        'org.create',
      ],
    );
    const ruleEntry = audit.body.data.entries[2];
    t.is(ruleEntry.actor, 'colleague@shop.example');
    t.is(ruleEntry.target_id, rule.body.data.id);
    t.false(audit.text.includes(hook.body.data.signing_secret), 'no secret reaches the audit log');
    t.false(audit.text.includes(key.body.data.key));
  },
);
