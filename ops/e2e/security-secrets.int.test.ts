import test from 'ava';
import { apiClient } from '../../shared/testing/http-client.ts';
import { useStack } from '../testing/stack.ts';

/** Issue 10 item 5: no credentials in stored URLs, no secret in the audit log. */
const stack = useStack(test, { processor: false });
const api = apiClient(stack);
test.serial.before(async () => {
  await stack.infra.database.db
    .updateTable('orgs')
    .set({ plan: 'enterprise' })
    .where('id', '=', stack.tenant.orgId)
    .execute();
});

test('webhook and site URLs with credentials are refused with a 400 naming the field', async (t) => {
  const { tenant } = stack;
  const token = tenant.owner.token;
  const cases: [string, string, unknown][] = [
    ['POST', '/v1/manage/webhooks', { org_id: tenant.orgId, url: 'https://user:pass@hooks.example/in' }],
    ['POST', '/v1/manage/webhooks', { org_id: tenant.orgId, url: 'https://hooks.example/in?token=s3cret' }],
    ['POST', '/v1/manage/site', { org_id: tenant.orgId, name: 'x', url: 'https://admin:pw@shop.example' }],
    ['PATCH', `/v1/manage/site/${tenant.siteId}`, { url: 'https://admin:pw@shop.example' }],
  ];
  for (const [method, path, body] of cases) {
    const res = await api(method as 'POST', path, { token, body });
    t.is(res.status, 400, `${method} ${path}`);
    t.is(res.body.error.details[0].path, 'url');
    t.regex(res.body.error.message, /credential/);
  }
  const hooks = await stack.infra.database.db
    .selectFrom('webhook_endpoints')
    .select('url')
    .where('org_id', '=', tenant.orgId)
    .execute();
  t.deepEqual(
    hooks.filter((h) => h.url.includes('@') || h.url.includes('token=')),
    [],
    'nothing stored',
  );
});

test('the audit log holds no secret: a chosen signing secret, secret-shaped text and URL credentials are redacted', async (t) => {
  const { tenant } = stack;
  const made = await api('POST', '/v1/manage/webhooks', {
    token: tenant.owner.token,
    body: {
      org_id: tenant.orgId,
      url: 'https://hooks.example/in',
      secret: 'whsec_chosen_by_the_customer_123',
      description: `key ${tenant.secretKey}`,
    },
  });
  t.is(made.status, 201, made.text);
  const audit = await api('GET', `/v1/query/audit?org_id=${tenant.orgId}`, { token: tenant.owner.token });
  const text = JSON.stringify(audit.body.data.entries);
  t.true(text.includes('webhook.create'));
  t.false(text.includes('whsec_chosen_by_the_customer_123'));
  t.false(text.includes(tenant.secretKey));
  const rows = await stack.infra.database.db
    .selectFrom('audit_log')
    .select('summary')
    .where('org_id', '=', tenant.orgId)
    .execute();
  t.false(JSON.stringify(rows).includes(tenant.secretKey), 'not in the stored rows either');
});
