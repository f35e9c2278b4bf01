import test from 'ava';
import { sql } from 'kysely';
import { InstanceKeys } from '../../shared/auth/instance-keys.ts';
import { unseal } from '../../shared/auth/secret-box.ts';
import { createLogger } from '../../shared/logger.ts';
import { OutboxRelay } from '../../processor/notify/outbox-relay.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { apiClient, type ApiCall, type Method } from '../../shared/testing/http-client.ts';
import { REQUESTS, tenantFixtures } from '../testing/manage-fixtures.ts';
import { startTestStack, type TestStack } from '../testing/stack.ts';
import { notifyLog } from '../testing/notify-log.ts';

let stack: TestStack;
let api: ApiCall;
let owner: string;
let relay: OutboxRelay;
test.before(async () => {
  stack = await startTestStack({ processor: false });
  // Commands go out through the outbox: the processor's relay publishes them; this stack runs no processor.
  relay = new OutboxRelay({
    db: stack.infra.database.db,
    bus: stack.infra.bus,
    topology: stack.infra.topology,
    log: createLogger('silent'),
  });
  relay.start();
  api = apiClient(stack.baseUrl);
  owner = stack.tenant.owner.token;
});
test.after.always(async () => {
  await relay?.stop();
  await stack?.stop();
});

const s = (n: number) => 'x'.repeat(n);
/** The 400's details name exactly `path` (and nothing passes). */
const refused = (t: any, res: { status: number; body: any; text: string }, path: string) => {
  t.is(res.status, 400, res.text);
  t.is(res.body.error.code, 'invalid_input');
  t.deepEqual(
    res.body.error.details.map((d: { path: string }) => d.path),
    [path],
    res.text,
  );
};

test.serial('every bound of the Limits table holds at max and refuses max+1, naming the field', async (t) => {
  const { tenant } = stack;
  const fx = tenantFixtures(stack, tenant);
  const ok = (res: { status: number; text: string }, what: string) =>
    t.true(res.status >= 200 && res.status < 300, `${what}: ${res.status} ${res.text}`);
  // site name ≤ 120
  const site = `/v1/manage/site/${tenant.siteId}`;
  ok(await api('PATCH', site, { token: owner, body: { name: s(120) } }), 'site name 120');
  refused(t, await api('PATCH', site, { token: owner, body: { name: s(121) } }), 'name');
  refused(
    t,
    await api('POST', '/v1/manage/site', {
      token: owner,
      body: { org_id: tenant.orgId, name: s(121), url: 'https://a.example' },
    }),
    'name',
  );
  // webhook description ≤ 160
  const hook = await api('POST', '/v1/manage/webhooks', {
    token: owner,
    body: { org_id: tenant.orgId, url: 'https://h.example', description: s(160) },
  });
  ok(hook, 'webhook description 160');
  refused(
    t,
    await api('POST', '/v1/manage/webhooks', {
      token: owner,
      body: { org_id: tenant.orgId, url: 'https://h.example', description: s(161) },
    }),
    'description',
  );
  refused(
    t,
    await api('PATCH', `/v1/manage/webhooks/${hook.body.data.endpoint.id}`, {
      token: owner,
      body: { description: s(161) },
    }),
    'description',
  );
  // issue note ≤ 1000, assigned_to ≤ 256
  const issue = `/v1/manage/issues/${await fx.issueId()}`;
  ok(
    await api('PATCH', issue, { token: owner, body: { note: s(1000), assigned_to: s(256) } }),
    'note 1000, assigned_to 256',
  );
  refused(t, await api('PATCH', issue, { token: owner, body: { note: s(1001) } }), 'note');
  refused(t, await api('PATCH', issue, { token: owner, body: { assigned_to: s(257) } }), 'assigned_to');
  // alert resolved_reason ≤ 500
  ok(
    await api('PATCH', `/v1/manage/alerts/${await fx.alertId()}`, {
      token: owner,
      body: { status: 'resolved', resolved_reason: s(500) },
    }),
    'resolved_reason 500',
  );
  refused(
    t,
    await api('PATCH', `/v1/manage/alerts/${await fx.alertId()}`, {
      token: owner,
      body: { status: 'resolved', resolved_reason: s(501) },
    }),
    'resolved_reason',
  );
  // alert rule threshold 0..1000, on create and update
  for (const threshold of [0, 1000])
    ok(
      await api('POST', '/v1/manage/alert-rules', {
        token: owner,
        body: { site_id: tenant.siteId, trigger_type: 'spike', threshold },
      }),
      `threshold ${threshold}`,
    );
  for (const threshold of [-1, 1001, 2.5])
    refused(
      t,
      await api('POST', '/v1/manage/alert-rules', {
        token: owner,
        body: { site_id: tenant.siteId, trigger_type: 'spike', threshold },
      }),
      'threshold',
    );
  // Only site_id is required on create (spec); a pasted short-form body with "*" and a capitalized channel works.
  const minimal = await api('POST', '/v1/manage/alert-rules', { token: owner, body: { site_id: tenant.siteId } });
  t.is(minimal.status, 201);
  t.like(minimal.body.data, { trigger_type: 'spike', threshold: 20, enabled: true });
  const short = await api('POST', '/v1/alert-rules', {
    token: owner,
    body: {
      site_id: tenant.siteId,
      name: 'All pages',
      trigger_type: 'spike',
      page_pattern: '*',
      slack_channel: '#Alerts',
      channels: ['slack'],
    },
  });
  t.is(short.status, 201);
  t.like(short.body.data, { page_pattern: '*', slack_channel: '#alerts' });
  const rule = `/v1/manage/alert-rules/${await fx.ruleId()}`;
  for (const threshold of [0, 1000])
    ok(await api('PATCH', rule, { token: owner, body: { threshold } }), `patch threshold ${threshold}`);
  for (const threshold of [-1, 1001])
    refused(t, await api('PATCH', rule, { token: owner, body: { threshold } }), 'threshold');
  // audit limit 1..500, default 100
  const audit = (q: string) => api('GET', `/v1/query/audit?org_id=${tenant.orgId}${q}`, { token: owner });
  for (let i = 0; i < 110; i++)
    await sql`insert into audit_log (org_id, actor_type, actor, action, target_type, target_id, summary) values (${tenant.orgId}, 'user', 'seed', 'seed.row', 'seed', ${String(i)}, '{}')`.execute(
      stack.infra.database.db,
    );
  t.is((await audit('')).body.data.entries.length, 100, 'default 100');
  t.is((await audit('&limit=1')).body.data.entries.length, 1);
  t.true((await audit('&limit=500')).body.data.entries.length > 100);
  refused(t, await audit('&limit=0'), 'limit');
  refused(t, await audit('&limit=501'), 'limit');
  const newest = (await audit('&limit=2')).body.data.entries;
  t.true(newest[0].id > newest[1].id, 'newest first');
});

test.serial('unknown fields are refused, so nothing can be mass-assigned', async (t) => {
  const { tenant } = stack;
  const fx = tenantFixtures(stack, tenant);
  const site = await api('POST', '/v1/manage/site', {
    token: owner,
    body: {
      org_id: tenant.orgId,
      name: 'x',
      url: 'https://x.example',
      id: crypto.randomUUID(),
      created_at: '2020-01-01T00:00:00Z',
    },
  });
  t.is(site.status, 400);
  t.deepEqual(site.body.error.details.map((d: { path: string }) => d.path).sort(), ['created_at', 'id']);
  refused(
    t,
    await api('PATCH', `/v1/manage/site/${tenant.siteId}`, { token: owner, body: { org_id: crypto.randomUUID() } }),
    'org_id',
  );
  refused(
    t,
    await api('PATCH', `/v1/manage/webhooks/${await fx.webhookId()}`, {
      token: owner,
      body: { signing_secret: 'mine' },
    }),
    'signing_secret',
  );
  refused(
    t,
    await api('PATCH', `/v1/manage/members/${await fx.memberId()}`, {
      token: owner,
      body: { role: 'admin', user_id: crypto.randomUUID() },
    }),
    'user_id',
  );
  refused(
    t,
    await api('POST', '/v1/manage/members', {
      token: owner,
      body: { org_id: tenant.orgId, email: 'boss@test.example', role: 'owner' },
    }),
    'role',
  );
  refused(
    t,
    await api('PATCH', `/v1/manage/alert-rules/${await fx.ruleId()}`, {
      token: owner,
      body: { site_id: crypto.randomUUID() },
    }),
    'site_id',
  );
  const text = await api('POST', '/v1/manage/alert-rules', {
    token: owner,
    body: 'threshold=1',
    headers: { 'content-type': 'text/plain' },
  });
  t.is(text.status, 415, 'writes need application/json');
  // The short form's body is only `message`: the site comes from the query, or is the org's only site.
  const bare = await api('POST', '/v1/annotations', { token: owner, body: { message: 'campaign started' } });
  t.is(bare.status, 201);
  t.is(bare.body.data.site_id, tenant.siteId);
  t.is(
    (await api('POST', `/v1/annotations?site_id=${tenant.siteId}`, { token: owner, body: { message: 'via query' } }))
      .body.data.site_id,
    tenant.siteId,
  );
  const huge = await api('POST', '/v1/annotations', {
    token: owner,
    body: { site_id: tenant.siteId, message: 'x', page: `/${s(70_000)}` },
  });
  t.is(huge.status, 413);
});

test.serial(
  'alerts move forward only; each change is audited; acknowledged and resolved are published as events, in order',
  async (t) => {
    const { tenant } = stack;
    const fx = tenantFixtures(stack, tenant);
    const notifications = await notifyLog<any>(stack, 'alert.>');
    const id = await fx.alertId();
    const set = (body: object, short = false) =>
      api(short ? 'POST' : 'PATCH', short ? `/v1/alerts/${id}` : `/v1/manage/alerts/${id}`, { token: owner, body });
    const acked = await set({ status: 'acknowledged' });
    t.is(acked.status, 200);
    t.is(acked.body.data.status, 'acknowledged');
    t.truthy(acked.body.data.acknowledged_at);
    t.is((await set({ status: 'investigating' }, true)).body.data.status, 'investigating');
    const back = await set({ status: 'acknowledged' });
    t.is(back.status, 409);
    t.is(back.body.error.code, 'conflict');
    refused(t, await set({ status: 'acknowledged', resolved_reason: 'why' }), 'resolved_reason');
    refused(t, await set({ status: 'fired' }), 'status');
    const resolved = await set({ status: 'resolved', resolved_reason: 'rolled back the deploy' });
    t.is(resolved.body.data.resolved_reason, 'rolled back the deploy');
    t.is((await set({ status: 'resolved' })).status, 200, 'repeating the current status is a harmless no-op');
    t.is((await set({ status: 'investigating' })).status, 409, 'a resolved alert stays resolved');

    const events = await eventually(
      async () => {
        const mine = (await notifications.drain()).filter((e) => e.alert?.id === id);
        return mine.length >= 2 ? mine : undefined;
      },
      { timeoutMs: 20_000, stepMs: 10 },
    );
    t.deepEqual(
      events.map((e) => [e.event, e.alert.status, e.alert.resolved_reason]),
      [
        ['alert.acknowledged', 'acknowledged', null],
        ['alert.resolved', 'resolved', 'rolled back the deploy'],
      ],
    );
    const entries = (await api('GET', `/v1/query/audit?org_id=${tenant.orgId}&limit=3`, { token: owner })).body.data
      .entries;
    t.deepEqual(
      entries.map((e: any) => e.summary.changes.status),
      [
        { from: 'investigating', to: 'resolved' },
        { from: 'acknowledged', to: 'investigating' },
        { from: 'fired', to: 'acknowledged' },
      ],
    );
  },
);

test.serial(
  'issues: any of the six statuses, never regressed by hand, never on a merged issue; history recorded, each change published as issue.updated',
  async (t) => {
    const { tenant } = stack;
    const fx = tenantFixtures(stack, tenant);
    const db = stack.infra.database.db;
    const id = await fx.issueId();
    for (const status of ['triaged', 'in_progress', 'resolved', 'open', 'verified', 'ignored']) {
      const r = await api('POST', `/v1/issues/${id}`, { token: owner, body: { status } });
      t.is(r.body.data?.status, status, r.text);
    }
    const both = await api('PATCH', `/v1/manage/issues/${id}`, {
      token: owner,
      body: { status: 'triaged', note: 'checkout team', assigned_to: 'dana', frozen: true, severity: 75 },
    });
    t.like(both.body.data, {
      status: 'triaged',
      note: 'checkout team',
      assigned_to: 'dana',
      frozen: true,
      severity: 75,
    });
    refused(
      t,
      await api('PATCH', `/v1/manage/issues/${id}`, { token: owner, body: { status: 'regressed' } }),
      'status',
    );
    refused(t, await api('PATCH', `/v1/manage/issues/${id}`, { token: owner, body: {} }), '');
    const history = await db
      .selectFrom('issue_updates')
      .select(['source', 'changes'])
      .where('issue_id', '=', id)
      .orderBy('id')
      .execute();
    t.is(history.length, 7);
    t.true(history.every((h) => h.source === 'api'));
    const notifications = await notifyLog<any>(stack, 'issue.updated');
    const updates = await eventually(
      async () => {
        const mine = (await notifications.drain()).filter((n) => n.issue?.id === id);
        return mine.length >= 7 ? mine : undefined;
      },
      { timeoutMs: 20_000, stepMs: 10 },
    );
    t.is(updates.length, 7);
    t.is(updates[6].issue.status, 'triaged');
    t.truthy(updates[6].actor);
    t.deepEqual(updates[6].changes, {
      status: { from: 'ignored', to: 'triaged' },
      note: { from: null, to: 'checkout team' },
      assigned_to: { from: null, to: 'dana' },
      frozen: { from: false, to: true },
      severity: { from: 40, to: 75 },
    });

    const merged = await fx.issueId();
    await db.updateTable('ux_issues').set({ merged_into: id }).where('id', '=', merged).execute();
    const r = await api('PATCH', `/v1/manage/issues/${merged}`, { token: owner, body: { note: 'x' } });
    t.is(r.status, 409);
    t.regex(r.body.error.message, new RegExp(id));
  },
);

test.serial(
  'members: owner only, nobody changes or removes themselves, owner is granted only by an owner',
  async (t) => {
    // Its own org: the first owner is demoted on the way.
    const tenant = await stack.newTenant();
    const owner = tenant.owner.token;
    const admin = await stack.newUser(tenant, 'admin');
    const list = async () =>
      (await api('GET', `/v1/manage/members?org_id=${tenant.orgId}`, { token: owner })).body.data;
    const members = (await list()).members;
    const me = members.find((m: any) => m.user_id === tenant.owner.userId);
    const adminRow = members.find((m: any) => m.user_id === admin.userId);
    t.is(
      (await api('PATCH', `/v1/manage/members/${me.id}`, { token: owner, body: { role: 'admin' } })).status,
      403,
      'not your own role',
    );
    t.is((await api('DELETE', `/v1/manage/members/${me.id}`, { token: owner })).status, 403, 'not yourself');
    t.is(
      (await api('PATCH', `/v1/manage/members/${me.id}`, { token: admin.token, body: { role: 'viewer' } })).status,
      403,
      'admins do not change roles',
    );
    const promoted = await api('PATCH', `/v1/manage/members/${adminRow.id}`, { token: owner, body: { role: 'owner' } });
    t.is(promoted.body.data.role, 'owner');
    t.is(
      (await api('PATCH', `/v1/manage/members/${me.id}`, { token: admin.token, body: { role: 'member' } })).status,
      200,
      'the new owner may change the first one',
    );

    const invited = await api('POST', '/v1/manage/members', {
      token: admin.token,
      body: { org_id: tenant.orgId, email: 'New.Person@test.example', role: 'viewer' },
    });
    t.is(invited.status, 201);
    t.is(invited.body.data.invitation.email, 'new.person@test.example');
    const again = await api('POST', '/v1/manage/members/invite', {
      token: admin.token,
      body: { email: 'new.person@test.example', role: 'admin' },
    });
    t.is(again.status, 201, 'inviting again replaces the pending invitation');
    const old = await api('POST', '/v1/auth/accept-invite', {
      body: { token: invited.body.data.invite_token, password: 'long enough' },
    });
    t.is(old.status, 404, 'the replaced invitation no longer works');
    t.deepEqual(
      (await list()).invitations.map((i: any) => [i.email, i.role]),
      [['new.person@test.example', 'admin']],
    );
    t.is(
      (
        await api('POST', '/v1/manage/members', {
          token: admin.token,
          body: { org_id: tenant.orgId, email: admin.email, role: 'viewer' },
        })
      ).status,
      409,
      'already a member',
    );
    const cancel = await api('DELETE', `/v1/manage/members/${again.body.data.invitation.id}`, { token: admin.token });
    t.is(cancel.status, 200, 'an owner cancels a pending invitation');
    t.deepEqual((await list()).invitations, []);
  },
);

test.serial('an existing user joins another org with their own password; login picks the org', async (t) => {
  const { tenant } = stack;
  const other = await stack.newTenant();
  const inv = await api('POST', '/v1/manage/members', {
    token: other.owner.token,
    body: { org_id: other.orgId, email: tenant.owner.email, role: 'member' },
  });
  t.is(
    (
      await api('POST', '/v1/auth/accept-invite', {
        body: { token: inv.body.data.invite_token, password: 'not their password' },
      })
    ).status,
    401,
  );
  const joined = await api('POST', '/v1/auth/accept-invite', {
    body: { token: inv.body.data.invite_token, password: tenant.owner.password },
  });
  t.is(joined.status, 201, joined.text);
  const login = await api('POST', '/v1/auth/login', {
    body: { email: tenant.owner.email, password: tenant.owner.password, org_id: other.orgId },
  });
  const asMember = await api('GET', `/v1/manage/alert-rules?site_id=${other.siteId}`, { token: login.body.data.token });
  t.is(asMember.status, 200);
  t.is(
    (await api('GET', `/v1/manage/alert-rules?site_id=${tenant.siteId}`, { token: login.body.data.token })).status,
    404,
    'one token, one org',
  );
  const wrong = await api('POST', '/v1/auth/login', {
    body: { email: tenant.owner.email, password: 'wrong password' },
  });
  const unknown = await api('POST', '/v1/auth/login', {
    body: { email: 'nobody@test.example', password: 'wrong password' },
  });
  t.is(wrong.status, 401);
  t.is(wrong.text, unknown.text, 'an unknown email and a wrong password answer alike');
  t.is(
    (
      await api('POST', '/v1/auth/signup', {
        body: { email: tenant.owner.email, password: 'long enough', org_name: 'dup' },
      })
    ).status,
    409,
  );
  refused(
    t,
    await api('POST', '/v1/auth/signup', { body: { email: 'x@test.example', password: 'short', org_name: 'x' } }),
    'password',
  );
});

test.serial(
  'webhooks: secret shown once, stored retrievable for signing; active/enabled aliases; delete disables and removes it (it no longer counts toward the bound: issue 30 N3)',
  async (t) => {
    const { tenant } = stack;
    const created = await api('POST', '/v1/manage/webhooks', {
      token: owner,
      body: { org_id: tenant.orgId, url: 'https://h.example/a', events: ['alert.triggered', 'deploy.recorded'] },
    });
    const { endpoint, signing_secret } = created.body.data;
    const row = await stack.infra.database.db
      .selectFrom('webhook_endpoints')
      .select('secret_sealed')
      .where('id', '=', endpoint.id)
      .executeTakeFirstOrThrow();
    t.false(row.secret_sealed.includes(signing_secret), 'not stored in the clear');
    t.is(
      unseal(await new InstanceKeys(stack.infra.database.db, stack.config).sealKey(), row.secret_sealed),
      signing_secret,
      'the dispatcher can sign with it',
    );
    const path = `/v1/manage/webhooks/${endpoint.id}`;
    t.like((await api('PATCH', path, { token: owner, body: { enabled: false } })).body.data, {
      active: false,
      enabled: false,
    });
    t.like((await api('PATCH', path, { token: owner, body: { active: true } })).body.data, {
      active: true,
      enabled: true,
    });
    refused(t, await api('PATCH', path, { token: owner, body: { active: true, enabled: false } }), 'enabled');
    refused(
      t,
      await api('POST', '/v1/manage/webhooks', {
        token: owner,
        body: { org_id: tenant.orgId, url: 'https://h.example', events: ['page.viewed'] },
      }),
      'events[0]',
    );
    refused(
      t,
      await api('POST', '/v1/manage/webhooks', {
        token: owner,
        body: { org_id: tenant.orgId, url: 'ftp://h.example' },
      }),
      'url',
    );
    const own = await api('POST', '/v1/manage/webhooks', {
      token: owner,
      body: { org_id: tenant.orgId, url: 'https://h.example/b', secret: 'my-own-secret-0123456789' },
    });
    t.is(own.body.data.signing_secret, 'my-own-secret-0123456789');
    const deleted = await api('DELETE', path, { token: owner });
    t.is(deleted.status, 200);
    t.like(deleted.body.data, { id: endpoint.id, active: false });
    const listed = await api('GET', `/v1/manage/webhooks?org_id=${tenant.orgId}`, { token: owner });
    t.is(
      listed.body.data.endpoints.find((e: any) => e.id === endpoint.id),
      undefined,
      'a deleted endpoint is no longer listed',
    );
    t.is(
      (await api('PATCH', path, { token: owner, body: { active: true } })).status,
      404,
      'nor can it be enabled again',
    );
  },
);

test.serial('integrations: per-provider validation, secrets never returned, one per provider and site', async (t) => {
  const { tenant } = stack;
  const connect = (provider: string, config: object) =>
    api('POST', '/v1/manage/integrations', { token: owner, body: { site_id: tenant.siteId, provider, config } });
  refused(t, await connect('slack', { webhook_url: 'https://evil.example/hook' }), 'config.webhook_url');
  refused(t, await connect('pagerduty', { routing_key: 'short' }), 'config.routing_key');
  refused(t, await connect('linear', { api_key: 'lin_api_0123456789abcdefghij' }), 'config.team_id');
  refused(
    t,
    await connect('github', { token: 'ghp_0123456789abcdefghijklmn', repository: 'no-slash' }),
    'config.repository',
  );
  refused(t, await connect('jira', {}), 'provider');
  const slackUrl = 'https://hooks.slack.com/services/T000/B000/XXXXXXXX';
  const slack = await connect('slack', { webhook_url: slackUrl, channel: '#ux' });
  t.is(slack.status, 201, slack.text);
  t.deepEqual(slack.body.data.config, { channel: '#ux' });
  t.deepEqual(slack.body.data.secrets, ['webhook_url']);
  t.is((await connect('slack', { webhook_url: slackUrl })).status, 409);
  const gh = await connect('github', { token: 'ghp_0123456789abcdefghijklmn', repository: 'shop/web' });
  t.is(gh.status, 201);
  const list = await api('GET', `/v1/manage/integrations?org_id=${tenant.orgId}`, { token: owner });
  t.deepEqual(list.body.data.integrations.map((i: any) => i.provider).sort(), ['github', 'slack']);
  t.false(list.text.includes('hooks.slack.com') || list.text.includes('ghp_'), 'no secret in the list');
  t.is((await api('DELETE', `/v1/manage/integrations/${slack.body.data.id}`, { token: owner })).status, 200);
  t.is(
    (await connect('slack', { bot_token: 'xoxb-123456789012-abc', channel: '#ux' })).status,
    201,
    'connectable again once disconnected',
  );
});

test.serial(
  'sdk config: per environment, each field replaces its stored value (revenue_config merges); a new environment starts from the defaults',
  async (t) => {
    const { tenant } = stack;
    const patch = (env: string, body: object) =>
      api('PATCH', `/v1/manage/sdk-config/${env}`, { token: owner, body: { site_id: tenant.siteId, ...body } });
    const r = await patch('production', {
      revenue_config: { enabled: true, currency: 'EUR', conversion_event: 'purchase' },
      segment: { app_version: '2.4.1' },
      sample_rate: 0.25,
      ignore_selectors: ['.chat-widget'],
    });
    t.is(r.status, 200, r.text);
    t.deepEqual(r.body.data.config, {
      sample_rate: 0.25,
      ignore_selectors: ['.chat-widget'],
      segment: { app_version: '2.4.1' },
      revenue_config: { enabled: true, currency: 'EUR', conversion_event: 'purchase' },
    });
    t.is(
      (await patch('production', { sample_rate: 1 })).body.data.config.revenue_config.currency,
      'EUR',
      'fields not sent stay',
    );
    const partial = await patch('production', { revenue_config: { enabled: false } });
    t.deepEqual(
      partial.body.data.config.revenue_config,
      { enabled: false, currency: 'EUR', conversion_event: 'purchase' },
      'revenue_config merges field by field',
    );
    refused(t, await patch('production', { sample_rate: 1.5 }), 'sample_rate');
    refused(
      t,
      await patch('production', { revenue_config: { enabled: true, currency: 'euro', conversion_event: 'x' } }),
      'revenue_config.currency',
    );
    refused(t, await patch('production', { ignore_selectors: Array(101).fill('.x') }), 'ignore_selectors');
    for (const env of ['moon', 'qa', 'Production']) {
      const r = await patch(env, { sample_rate: 0.5 });
      t.is(r.status, 404, env);
      t.is(r.body.error.code, 'not_found');
    }
    const staging = await patch('staging', { segment: { app_version: '2.5.0-rc1' } });
    t.is(staging.body.data.config.sample_rate, 1);
    const got = await api('GET', `/v1/manage/sdk-config?site_id=${tenant.siteId}`, { token: owner });
    t.deepEqual(
      got.body.data.environments.map((e: any) => e.environment),
      ['production', 'staging'],
    );
    const keyPatch = await api('PATCH', '/v1/manage/sdk-config/production', {
      token: tenant.secretKey,
      body: { sample_rate: 0.5 },
    });
    t.is(keyPatch.body.data.site_id, tenant.siteId, 'a site-scoped key means its own site');
    refused(
      t,
      await api('PATCH', '/v1/manage/sdk-config/production', { token: owner, body: { sample_rate: 0.5 } }),
      'site_id',
    );
  },
);

test.serial('deleting a site revokes its keys at once and hides it everywhere', async (t) => {
  const { tenant } = stack;
  await stack.infra.database.db
    .updateTable('orgs')
    .set({ plan: 'enterprise' })
    .where('id', '=', tenant.orgId)
    .execute();
  const made = await api('POST', '/v1/manage/site', {
    token: owner,
    body: { org_id: tenant.orgId, name: 'Doomed', url: 'https://doomed.example' },
  });
  const { site, secret_key } = made.body.data;
  t.is((await api('GET', `/v1/manage/alert-rules?site_id=${site.id}`, { token: secret_key })).status, 200);
  t.is((await api('DELETE', `/v1/manage/site/${site.id}`, { token: owner })).status, 200);
  t.is(
    (await api('GET', `/v1/manage/alert-rules?site_id=${site.id}`, { token: secret_key })).status,
    401,
    'its keys are revoked',
  );
  t.is((await api('GET', `/v1/manage/alert-rules?site_id=${site.id}`, { token: owner })).status, 404);
  const sites = await api('GET', `/v1/manage/site?org_id=${tenant.orgId}`, { token: owner });
  t.false(sites.body.data.sites.some((x: any) => x.id === site.id));
  t.is((await api('DELETE', `/v1/manage/site/${site.id}`, { token: owner })).status, 404);
});

test.serial('every write route leaves exactly one audit entry naming its actor and target', async (t) => {
  const tenant = await stack.newTenant();
  const db = stack.infra.database.db;
  await db.updateTable('orgs').set({ plan: 'enterprise' }).where('id', '=', tenant.orgId).execute();
  const fx = tenantFixtures(stack, tenant);
  const count = async () =>
    Number(
      (await sql<{ n: number }>`select count(*)::int as n from audit_log where org_id = ${tenant.orgId}`.execute(db))
        .rows[0].n,
    );
  const missing: string[] = [];
  // POSTs that only read: the Explorer's query body, and MCP (whose tool calls are audited after the answer, in mcp.int).
  const readsByPost = new Set(['POST /v1/query/explore', 'POST /v1/mcp']);
  const writes = Object.keys(REQUESTS).filter((r) => !r.startsWith('GET ') && !readsByPost.has(r));
  for (const route of writes) {
    const [method] = route.split(' ') as [Method, string];
    const req = await REQUESTS[route](fx);
    const before = await count();
    const res = await api(method, req.path, { token: tenant.owner.token, body: req.body });
    const after = await count();
    const last = await db
      .selectFrom('audit_log')
      .selectAll()
      .where('org_id', '=', tenant.orgId)
      .orderBy('id', 'desc')
      .executeTakeFirst();
    if (res.status >= 300 || after !== before + 1 || last?.actor !== tenant.owner.email || !last.target_id)
      missing.push(`${route}: ${res.status}, ${after - before} entries`);
  }
  t.deepEqual(missing, []);
  t.true(writes.length >= 25, `${writes.length} write routes`);
});
