import test from 'ava';
import { openApiPath } from './document.ts';
import { apiClient } from '../../shared/testing/http-client.ts';
import { servedRoutes } from '../../ops/testing/manage-fixtures.ts';
import { startTestStack, type TestStack } from '../../ops/testing/stack.ts';

let stack: TestStack;
let doc: any;
test.before(async () => {
  stack = await startTestStack({ processor: false });
  const res = await apiClient(stack.baseUrl)('GET', '/v1/openapi.json');
  doc = res.body;
});
test.after.always(async () => {
  await stack?.stop();
});

test('GET /v1/openapi.json is OpenAPI 3.1 with version 1.0.0, public', (t) => {
  t.is(doc.openapi, '3.1.0');
  t.is(doc.info.version, '1.0.0');
  t.deepEqual(doc.paths['/v1/openapi.json'].get.security, []);
});

test('every route the app serves is described, and nothing else is', (t) => {
  const served = servedRoutes(stack).map((r) => {
    const [method, path] = r.split(' ');
    return `${method.toLowerCase()} ${openApiPath(path)}`;
  });
  const described = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
    Object.keys(ops).map((m) => `${m} ${path}`),
  );
  t.deepEqual(
    served.filter((r) => !described.includes(r)),
    [],
    'a route without an OpenAPI entry: declare it in the RouteTable (platform.docs.ts for non-API roles)',
  );
  t.deepEqual(described.filter((r) => !served.includes(r)).sort(), [], 'an entry for a route that does not exist');
});

test('the described schemas are the validating ones: bounds, required fields, no unknown fields', (t) => {
  const body = (path: string, method: string) => doc.paths[path][method].requestBody.content['application/json'].schema;
  const site = body('/v1/manage/site', 'post');
  t.is(site.properties.name.maxLength, 120);
  t.is(site.additionalProperties, false);
  t.deepEqual([...site.required].sort(), ['name', 'org_id', 'url']);
  const rule = body('/v1/manage/alert-rules/{rule_id}', 'patch');
  t.is(rule.properties.threshold.minimum, 0);
  t.is(rule.properties.threshold.maximum, 1000);
  t.is(body('/v1/manage/alerts/{alert_id}', 'patch').properties.resolved_reason.maxLength, 500);
  const issue = body('/v1/manage/issues/{issue_id}', 'patch').properties;
  t.is(issue.note.anyOf?.find((s: { type: string }) => s.type === 'string')?.maxLength ?? issue.note.maxLength, 1000);
  t.false(JSON.stringify(issue.status).includes('regressed'), 'regressed is never set by hand');
  t.is(body('/v1/manage/webhooks', 'post').properties.description.maxLength, 160);
  const audit = doc.paths['/v1/query/audit'].get.parameters.find((p: { name: string }) => p.name === 'limit');
  t.deepEqual([audit.schema.minimum, audit.schema.maximum, audit.schema.default], [1, 500, 100]);
  t.deepEqual(doc.paths['/v1/manage/members/{member_id}'].patch['x-friction-auth'].roles, ['owner']);
});

test('every JSON route describes its success answer: no `data: {}` a generated client would type as unknown', (t) => {
  const untyped = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.entries(ops).flatMap(([method, op]) =>
      Object.entries(op.responses as Record<string, any>)
        .filter(([code, r]) => code.startsWith('2') && r.content?.['application/json'])
        .filter(([, r]) => {
          const data = r.content['application/json'].schema.properties?.data;
          // /v1/openapi.json answers the document itself and /v1/mcp JSON-RPC, not the envelope.
          return (
            path !== '/v1/openapi.json' && path !== '/v1/mcp' && (data === undefined || Object.keys(data).length === 0)
          );
        })
        .map(([code]) => `${method} ${path} ${code}`),
    ),
  );
  t.deepEqual(untyped, [], 'give the route a `response` schema in its RouteTable entry');
});
