import test from 'ava';
import { apiClient } from '../../shared/testing/http-client.ts';
import { startTestStack } from '../testing/stack.ts';

/** Spellings of loopback, private, link-local and metadata addresses a black-box probe tried (issue 10 item 8). */
const LOOPBACK_OR_PRIVATE = [
  'http://127.0.0.1/hook',
  'http://0x7f000001/',
  'http://2130706433/',
  'http://127.1/',
  'http://017700000001/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://localhost/',
  'http://10.0.0.5/',
  'http://192.168.1.1/',
  'http://172.20.0.1/',
  'http://[fd12::1]/',
];
const NEVER = [
  'http://169.254.169.254/latest/meta-data/',
  'http://2852039166/',
  'http://0xa9fea9fe/',
  'http://[fd00:ec2::254]/',
  'http://[::ffff:169.254.169.254]/',
  'http://[fe80::1]/',
  'http://169.254.1.1/',
  'http://0.0.0.0/',
  'http://224.0.0.1/',
];

test('webhook and site URLs pointing at loopback, private, link-local or metadata addresses are refused with a 400 naming url, at create and update', async (t) => {
  const stack = await startTestStack({ processor: false });
  t.teardown(() => stack.stop());
  const api = apiClient(stack.baseUrl);
  const { tenant } = stack;
  const token = tenant.owner.token;
  const hook = await api('POST', '/v1/manage/webhooks', {
    token,
    body: { org_id: tenant.orgId, url: 'https://hooks.public.example/in' },
  });
  t.is(hook.status, 201, hook.text);
  for (const url of [...LOOPBACK_OR_PRIVATE, ...NEVER]) {
    const answers = [
      await api('POST', '/v1/manage/webhooks', { token, body: { org_id: tenant.orgId, url } }),
      await api('PATCH', `/v1/manage/webhooks/${hook.body.data.endpoint.id}`, { token, body: { url } }),
      await api('POST', '/v1/manage/site', { token, body: { org_id: tenant.orgId, name: 'x', url } }),
      await api('PATCH', `/v1/manage/site/${tenant.siteId}`, { token, body: { url } }),
    ];
    for (const res of answers) {
      t.is(res.status, 400, `${url}: ${res.text}`);
      t.is(res.body.error.code, 'invalid_input');
      t.deepEqual(
        res.body.error.details.map((d: { path: string }) => d.path),
        ['url'],
        url,
      );
    }
  }
});

test('OUTBOUND_ALLOW_PRIVATE_NETWORKS=true admits loopback and private networks, never metadata or link-local', async (t) => {
  const stack = await startTestStack({ processor: false, env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' } });
  t.teardown(() => stack.stop());
  const api = apiClient(stack.baseUrl);
  const { tenant } = stack;
  const token = tenant.owner.token;
  for (const url of LOOPBACK_OR_PRIVATE) {
    const res = await api('POST', '/v1/manage/webhooks', { token, body: { org_id: tenant.orgId, url } });
    t.is(res.status, 201, `${url}: ${res.text}`);
  }
  for (const url of NEVER) {
    const res = await api('POST', '/v1/manage/webhooks', { token, body: { org_id: tenant.orgId, url } });
    t.is(res.status, 400, `${url}: ${res.text}`);
    t.notRegex(res.body.error.message, /unless/);
  }
});
