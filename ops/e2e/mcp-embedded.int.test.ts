import test from 'ava';
import { useStack } from '../testing/stack.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson } from '../../shared/testing/http-client.ts';
import { issueApiKey } from '../../shared/tenancy/provision.ts';
import { Client, StreamableHTTPClientTransport, type CallToolResult } from '../../api/mcp/sdk.ts';

const stack = useStack(test, { embedded: true, processor: false });

test('the embedded default (PGlite + TimescaleDB, one connection) serves the context route and the MCP tools, and writes their audit rows', async (t) => {
  const { tenant } = stack;
  const db = stack.infra.database.db;
  const key = await issueApiKey(db, { orgId: tenant.orgId, siteId: tenant.siteId, type: 'mcp', scopes: ['mcp:read'] });
  const ctx = await getJson(`${stack.baseUrl}/v1/mcp/context?site_id=${tenant.siteId}`, {
    authorization: `Bearer ${key.key}`,
  });
  t.is(ctx.status, 200, JSON.stringify(ctx.body));
  t.like(ctx.body.data, { site_id: tenant.siteId, pages: { total: 0, truncated: false } });
  const client = new Client({ name: 'embedded-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/v1/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key.key}` } },
    }),
  );
  // Tool calls back to back: each one's audit transaction runs while the next call reads, on the one connection.
  const results = (await Promise.all(
    ['get_site_context', 'list_issues', 'list_deploys', 'friction_journeys'].map((name) =>
      client.callTool({ name, arguments: {} }),
    ),
  )) as CallToolResult[];
  t.deepEqual(
    results.map((r) => r.isError ?? false),
    [false, false, false, false],
  );
  await client.close();
  const rows = await eventually(async () => {
    const r = await db.selectFrom('audit_log').select('target_id').where('actor_id', '=', key.id).execute();
    return r.length === 4 ? r : undefined;
  });
  t.deepEqual(rows.map((r) => r.target_id).sort(), [
    'friction_journeys',
    'get_site_context',
    'list_deploys',
    'list_issues',
  ]);
});
