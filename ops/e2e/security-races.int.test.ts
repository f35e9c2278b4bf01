import test from 'ava';
import { TENANT_BOUNDS } from '../../shared/tenancy/bounds.ts';
import { issueApiKey } from '../../shared/tenancy/provision.ts';
import { apiClient, type ApiCall } from '../../shared/testing/http-client.ts';
import { useStack } from '../testing/stack.ts';

/** Issue 10 item 6 (concurrent duplicate writes never answer 500) and item 7's bounds on what a tenant creates. */
const stack = useStack(test, { processor: false });
const api = apiClient(stack);

test('identical invitations sent in parallel: every answer is 201 (the documented replacement), one invitation stays pending', async (t) => {
  const { tenant } = stack;
  const email = 'racer@test.example';
  const statuses: number[] = [];
  for (let round = 0; round < 5; round++) {
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        api('POST', '/v1/manage/members', {
          token: tenant.owner.token,
          body: { org_id: tenant.orgId, email, role: 'member' },
        }),
      ),
    );
    statuses.push(...answers.map((a) => a.status));
  }
  t.deepEqual(statuses, Array(20).fill(201));
  const list = await api('GET', `/v1/manage/members?org_id=${tenant.orgId}`, { token: tenant.owner.token });
  t.is(list.body.data.invitations.filter((i: { email: string }) => i.email === email).length, 1);
});

test('one new environment created by parallel requests: every answer 200, one environment', async (t) => {
  const { tenant } = stack;
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      api('PATCH', `/v1/manage/sdk-config/staging?site_id=${tenant.siteId}`, {
        token: tenant.secretKey,
        body: { sample_rate: (i + 1) / 10 },
      }),
    ),
  );
  t.deepEqual(
    answers.map((a) => a.status),
    Array(8).fill(200),
    answers.map((a) => a.text).join('\n'),
  );
  const rows = await stack.infra.database.db
    .selectFrom('environments')
    .select('name')
    .where('site_id', '=', tenant.siteId)
    .where('name', '=', 'staging')
    .execute();
  t.is(rows.length, 1);
});

test('a tenant cannot create without bound: keys per site, webhooks per org, alert rules per site, pending invitations per org', async (t) => {
  const tenant = await stack.newTenant();
  const db = stack.infra.database.db;
  const token = tenant.owner.token;
  const { randomUUID } = await import('node:crypto');
  // Filled to one below each bound directly in the database (fast), then the API makes the last one and refuses the next.
  const activeKeys = 2; // the site's own publishable and secret keys
  for (let i = 0; i < TENANT_BOUNDS.api_keys - activeKeys - 1; i++)
    await issueApiKey(db, { orgId: tenant.orgId, siteId: tenant.siteId, type: 'secret', scopes: ['query:read'] });
  const below = <R>(bound: number, row: (i: number) => R): R[] => Array.from({ length: bound - 1 }, (_, i) => row(i));
  const webhooks = below(TENANT_BOUNDS.webhooks, () => ({
    id: randomUUID(),
    org_id: tenant.orgId,
    site_id: null,
    url: 'https://hooks.example/x',
    description: null,
    events: ['issue.created'],
    active: true,
    secret_sealed: 'v1.x.y.z',
  }));
  const rules = below(TENANT_BOUNDS.alert_rules, (i) => ({
    id: randomUUID(),
    site_id: tenant.siteId,
    name: `r${i}`,
    trigger_type: 'spike',
    threshold: 10,
    cooldown_minutes: 60,
    channels: ['webhook'],
    page_pattern: null,
    slack_channel: null,
    enabled: true,
  }));
  const invitations = below(TENANT_BOUNDS.invitations, (i) => ({
    id: randomUUID(),
    org_id: tenant.orgId,
    email: `p${i}@test.example`,
    role: 'viewer',
    token_hash: randomUUID(),
    expires_at: new Date(Date.now() + 86_400_000),
  }));
  await db.insertInto('webhook_endpoints').values(webhooks).execute();
  await db.insertInto('alert_rules').values(rules).execute();
  await db.insertInto('invitations').values(invitations).execute();

  const creations: [string, () => ReturnType<ApiCall>][] = [
    [
      'api_keys',
      () =>
        api('POST', '/v1/manage/keys', {
          token,
          body: { site_id: tenant.siteId, key_type: 'secret', scopes: ['query:read'] },
        }),
    ],
    [
      'webhooks',
      () =>
        api('POST', '/v1/manage/webhooks', { token, body: { org_id: tenant.orgId, url: 'https://hooks.example/y' } }),
    ],
    [
      'alert_rules',
      () =>
        api('POST', '/v1/manage/alert-rules', {
          token,
          body: { site_id: tenant.siteId, trigger_type: 'spike', threshold: 5, channels: ['webhook'] },
        }),
    ],
    [
      'invitations',
      () =>
        api('POST', '/v1/manage/members', {
          token,
          body: { org_id: tenant.orgId, email: `last-${randomUUID()}@test.example`, role: 'viewer' },
        }),
    ],
  ];
  for (const [what, create] of creations) {
    const last = await create();
    t.is(last.status, 201, `${what}: the last one fits (${last.text.slice(0, 200)})`);
    const over = await create();
    t.is(over.status, 429, what);
    t.is(over.body.error.code, 'quota_exceeded', what);
    t.is(over.body.error.details.limit, TENANT_BOUNDS[what as keyof typeof TENANT_BOUNDS], what);
  }
  // Re-inviting a pending address replaces its invitation: not one more.
  const again = await api('POST', '/v1/manage/members', {
    token,
    body: { org_id: tenant.orgId, email: 'p0@test.example', role: 'member' },
  });
  t.is(again.status, 201);
});
