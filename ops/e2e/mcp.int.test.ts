import test from 'ava';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { type TestTenant } from '../testing/stack.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson, postJson } from '../../shared/testing/http-client.ts';
import { seedMcpSite, type SeededSite } from '../testing/mcp-seed.ts';
import { issueApiKey } from '../../shared/tenancy/provision.ts';
import { spawnRole } from '../../shared/testing/processes.ts';
import { Client, StdioClientTransport, StreamableHTTPClientTransport, type CallToolResult } from '../../api/mcp/sdk.ts';
import { runDeployCommand, type CliIo } from '../deploy-cli.ts';
import { useStack } from '../testing/stack.ts';

const stack = useStack(test, { env: { MCP_ALLOWED_ORIGINS: 'https://app.example' } });
let tenant: TestTenant;
let seeded: SeededSite;
let mcpKey: string;

test.serial.before(async () => {
  tenant = stack.tenant;
  seeded = await seedMcpSite({
    baseUrl: stack.baseUrl,
    db: stack.infra.database.db,
    siteId: tenant.siteId,
    publishableKey: tenant.publishableKey,
    tick: () => stack.tick(),
  });
  mcpKey = (await keyOf(tenant)).key;
});

/** A new key of `t`'s site, an MCP key unless said otherwise. */
const keyOf = (t: TestTenant, type: 'mcp' | 'secret' = 'mcp', scopes = ['mcp:read']) =>
  issueApiKey(stack.infra.database.db, { orgId: t.orgId, siteId: t.siteId, type, scopes });

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'friction-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.baseUrl}/v1/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}
const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
const call = async (c: Client, name: string, args: Record<string, unknown> = {}) =>
  (await c.callTool({ name, arguments: args })) as CallToolResult;

/** A raw JSON-RPC `initialize` request (id 1) from the client `name`. */
const initialize = (name: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name, version: '1' } },
  });
/** A raw JSON-RPC POST (what a misbehaving client sends). */
const rpc = (body: string, headers: Record<string, string> = {}) =>
  fetch(`${stack.baseUrl}/v1/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${mcpKey}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body,
  });

test('tools/list: at most 8 read-only tools, annotated, each with a one-line description, input and output schema; under 16 KB; the prompt is listed', async (t) => {
  const c = await connect(mcpKey);
  const { tools } = await c.listTools();
  t.deepEqual(
    tools.map((x) => x.name),
    [
      'get_site_context',
      'list_issues',
      'get_issue',
      'get_page',
      'list_deploys',
      'check_deploy',
      'friction_journeys',
      'explore',
    ],
  );
  t.true(tools.length <= 8);
  for (const tool of tools) {
    t.deepEqual(tool.annotations, { readOnlyHint: true, openWorldHint: false }, tool.name);
    t.true(!!tool.description && !tool.description.includes('\n') && tool.description.length <= 140, tool.name);
    t.is(tool.inputSchema.type, 'object', tool.name);
    t.is(tool.outputSchema?.type, 'object', tool.name);
  }
  const size = Buffer.byteLength(JSON.stringify({ tools }));
  t.true(size < 16 * 1024, `tools/list is ${size} bytes`);
  const { prompts } = await c.listPrompts();
  t.deepEqual(
    prompts.map((p) => p.name),
    ['post_deploy_check'],
  );
  t.deepEqual(
    prompts[0].arguments?.map((a) => [a.name, a.required]),
    [
      ['deploy', true],
      ['site_id', false],
    ],
  );
  await c.close();
});

test('every tool answers on the seeded site with structuredContent and a short text summary, equal to the REST route it wraps', async (t) => {
  const c = await connect(mcpKey);
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  const q = `site_id=${tenant.siteId}`;

  const ctx = await call(c, 'get_site_context');
  t.falsy(ctx.isError, text(ctx));
  const rest = await getJson(`${stack.baseUrl}/v1/query/mcp/context?${q}`, auth);
  t.is(rest.status, 200);
  // Scores may move between the two reads (the processor keeps scoring); the lists' members may not.
  const members = (c: any) => ({
    pages: c.pages.items.map((p: any) => p.page).sort(),
    issues: c.issues,
    deploys: c.deploys,
    alerts: c.alerts,
    recommendations: c.recommendations,
  });
  t.deepEqual(members(ctx.structuredContent), members(rest.body.data));
  t.like(rest.body.data.alerts.items[0], { rule_name: 'checkout spike', mcp_channel: true });
  t.regex(text(ctx), /Overall score/);

  const issues = await call(c, 'list_issues', { limit: 1 });
  const restIssues = await getJson(`${stack.baseUrl}/v1/query/issues?${q}&limit=1`, auth);
  t.like(issues.structuredContent, { total: restIssues.body.data.total, truncated: restIssues.body.data.total > 1 });
  t.is((issues.structuredContent as any).issues[0].id, restIssues.body.data.issues[0].id);

  const issue = await call(c, 'get_issue', { issue_id: seeded.issueId });
  t.falsy(issue.isError, text(issue));
  const restIssue = await getJson(`${stack.baseUrl}/v1/query/issues/${seeded.issueId}?${q}`, auth);
  t.like((issue.structuredContent as any).issue, {
    id: seeded.issueId,
    title: restIssue.body.data.title,
    hypothesis: restIssue.body.data.hypothesis,
    evidence_total: restIssue.body.data.sessions.length,
  });
  t.true(Array.isArray((issue.structuredContent as any).issue.verifications));

  const page = await call(c, 'get_page', { page: seeded.page });
  t.falsy(page.isError, text(page));
  const restPage = await getJson(`${stack.baseUrl}/v1/query/page?${q}&page=${encodeURIComponent(seeded.page)}`, auth);
  t.like(page.structuredContent, {
    page: seeded.page,
    score: restPage.body.data.score,
    trend: restPage.body.data.trend,
  });
  const heat = (page.structuredContent as any).heatmap;
  const restHeat = await getJson(
    `${stack.baseUrl}/v1/query/page-heatmap?${q}&page=${encodeURIComponent(seeded.page)}`,
    auth,
  );
  t.is(heat.signals, restHeat.body.data.count);

  const deploys = await call(c, 'list_deploys');
  const restDeploys = await getJson(`${stack.baseUrl}/v1/query/deploys?${q}`, auth);
  t.deepEqual(
    (deploys.structuredContent as any).deploys.map((d: any) => [d.id, d.verdict]),
    restDeploys.body.data.deploys.map((d: any) => [d.id, d.verdict]),
  );

  const journeys = await call(c, 'friction_journeys', { limit: 2 });
  const restJourneys = await getJson(`${stack.baseUrl}/v1/query/journeys/friction?${q}`, auth);
  t.is((journeys.structuredContent as any).total, restJourneys.body.data.edges.length);
  t.deepEqual(
    (journeys.structuredContent as any).edges,
    restJourneys.body.data.edges.slice(0, 2).map(({ examples: _, ...e }: any) => e),
  );
  t.true(restJourneys.body.data.edges.length > 0, 'the demo traffic has friction edges');

  const check = await call(c, 'check_deploy', { deploy: seeded.pass.version });
  t.like(check.structuredContent, { verdict: 'PASS', deploy: { id: seeded.pass.id } });
  t.regex(text(check), /^PASS: deploy 2\.3\.0/);
  await c.close();
});

function cliIo(): CliIo & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    out: (l) => lines.push(l),
    err: () => {},
    env: {},
    fetch: (...a) => fetch(...a),
    sleep: async () => {},
    now: () => Date.now(),
  };
}

for (const which of ['pass', 'fail'] as const) {
  test(`post_deploy_check and check_deploy give the deploy record's verdict for the ${which}ing deploy, as GET /v1/query/deploys and friction deploy check`, async (t) => {
    const d = seeded[which];
    const expected = which === 'pass' ? 'PASS' : 'FAIL';
    const rest = await getJson(`${stack.baseUrl}/v1/query/deploys?site_id=${tenant.siteId}`, {
      authorization: `Bearer ${tenant.secretKey}`,
    });
    t.is(rest.body.data.deploys.find((x: any) => x.id === d.id).verdict, expected);
    const io = cliIo();
    const exit = await runDeployCommand(
      ['check', '--deploy', d.id, '--base-url', stack.baseUrl, '--key', tenant.secretKey, '--site', tenant.siteId],
      io,
    );
    t.is(exit, which === 'pass' ? 0 : 1);
    t.regex(io.lines[0], new RegExp(`^${expected}:`));
    const c = await connect(mcpKey);
    for (const deploy of [d.id, d.version]) {
      const prompt = await c.getPrompt({ name: 'post_deploy_check', arguments: { deploy } });
      const msg = prompt.messages[0].content;
      t.is(msg.type, 'text');
      const body = msg.type === 'text' ? msg.text : '';
      t.regex(body, new RegExp(`Friction's verdict now: ${expected}\\.`));
      t.regex(body, /Call the check_deploy tool/);
      t.regex(body, /WARN: not conclusive yet, usually not enough traffic/);
      const check = await call(c, 'check_deploy', { deploy });
      t.is((check.structuredContent as any).verdict, expected);
      t.deepEqual(
        (check.structuredContent as any).verdict_reasons,
        rest.body.data.deploys.find((x: any) => x.id === d.id).verdict_reasons,
      );
    }
    await c.close();
  });
}

test('explore: the Explorer query through the tool answers as POST /v1/query/explore; a bad query is a tool error naming its path', async (t) => {
  const c = await connect(mcpKey);
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  // The two calls run a moment apart: their timing and window bounds differ, nothing else may.
  const strip = (a: any) => ({
    ...a,
    meta: { ...a.meta, took_ms: 0, window: { ...a.meta.window, from: null, to: null } },
  });
  for (const query of [
    {
      window_days: 7,
      filters: [{ field: 'signal', op: 'is', value: 'rage_click' }],
      output: { mode: 'measure', metric: 'count', group_by: 'page' },
    },
    {
      filters: [
        { field: 'page', op: 'contains', value: 'check' },
        { field: 'confused', op: 'is', value: true },
      ],
      output: { mode: 'list', limit: 5 },
    },
  ]) {
    const r = await call(c, 'explore', { query });
    t.falsy(r.isError, text(r));
    const rest = await postJson(`${stack.baseUrl}/v1/query/explore?site_id=${tenant.siteId}`, query, auth);
    t.is(rest.status, 200);
    t.deepEqual(strip(r.structuredContent), strip(rest.body.data));
    t.true(text(r).length > 0 && !text(r).includes('\n'));
  }
  const bad = await call(c, 'explore', { query: { filters: [{ field: 'signal', op: 'sounds_like', value: 'x' }] } });
  t.true(bad.isError);
  t.regex(text(bad), /query\.filters\[0\]\.op/);
  await c.close();
});

test('credentials: no key 401 with WWW-Authenticate; publishable key 403; a secret key with query:read works; a key without a read scope 403', async (t) => {
  const init = initialize('x');
  const none = await rpc(init, { authorization: '' });
  t.is(none.status, 401);
  t.regex(none.headers.get('www-authenticate') ?? '', /^Bearer realm="friction"/);
  const pub = await rpc(init, { authorization: `Bearer ${tenant.publishableKey}` });
  t.is(pub.status, 403);
  const writeOnly = (await keyOf(tenant, 'secret', ['manage:write'])).key;
  t.is((await rpc(init, { authorization: `Bearer ${writeOnly}` })).status, 403);
  const c = await connect(tenant.secretKey);
  t.falsy((await call(c, 'list_deploys')).isError);
  await c.close();
});

test('a foreign Origin is refused with 403 before anything else; the public origin passes', async (t) => {
  const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const foreign = await rpc(list, { origin: 'https://evil.example' });
  t.is(foreign.status, 403);
  t.is((await foreign.json()).error.code, 'forbidden');
  t.is((await rpc(list, { origin: 'https://evil.example', authorization: '' })).status, 403);
  const allowed = await rpc(list, { origin: 'https://app.example' });
  t.is(allowed.status, 200);
  t.true(Array.isArray((await allowed.json()).result.tools));
});

test("another tenant's site, issue and deploy are not found, with the same message as a random id", async (t) => {
  const other = await stack.newTenant();
  const otherIssue = randomUUID();
  // A copy of the seeded issue, moved to the other tenant's site.
  await sql`insert into ux_issues select (jsonb_populate_record(null::ux_issues, to_jsonb(i) || jsonb_build_object('id', ${otherIssue}::uuid, 'site_id', ${other.siteId}::uuid))).*
            from ux_issues i where id = ${seeded.issueId}`.execute(stack.infra.database.db);
  const c = await connect(mcpKey);
  const foreignSite = await call(c, 'list_issues', { site_id: other.siteId });
  const randomSite = await call(c, 'list_issues', { site_id: randomUUID() });
  t.true(foreignSite.isError);
  t.is(text(foreignSite), text(randomSite));
  t.is(text(foreignSite), 'site not found');
  const foreignIssue = await call(c, 'get_issue', { issue_id: otherIssue });
  const randomIssue = await call(c, 'get_issue', { issue_id: randomUUID() });
  t.true(foreignIssue.isError);
  t.is(text(foreignIssue), text(randomIssue));
  const otherDeploy = await postJson(
    `${stack.baseUrl}/v1/deploys`,
    { version: '9.9.9' },
    { authorization: `Bearer ${other.secretKey}` },
  );
  const foreignDeploy = await call(c, 'check_deploy', { deploy: otherDeploy.body.data.id });
  t.true(foreignDeploy.isError);
  t.regex(text(foreignDeploy), /^deploy not found/);
  await t.throwsAsync(c.getPrompt({ name: 'post_deploy_check', arguments: { deploy: otherDeploy.body.data.id } }), {
    message: /deploy not found/,
  });
  await t.throwsAsync(
    c.getPrompt({ name: 'post_deploy_check', arguments: { deploy: seeded.pass.id, site_id: other.siteId } }),
    { message: /site not found/ },
  );
  // The other tenant's own MCP key sees its site only.
  const otherKey = (await keyOf(other)).key;
  const oc = await connect(otherKey);
  t.true((await call(oc, 'get_issue', { issue_id: seeded.issueId })).isError);
  t.like((await call(oc, 'list_issues')).structuredContent, { total: 1 });
  await oc.close();
  await c.close();
});

test('protocol edges: GET and DELETE 405; malformed JSON and invalid JSON-RPC get JSON-RPC errors (never 500); tool errors are isError results', async (t) => {
  for (const method of ['GET', 'DELETE']) {
    const r = await fetch(`${stack.baseUrl}/v1/mcp`, {
      method,
      headers: { authorization: `Bearer ${mcpKey}`, accept: 'text/event-stream' },
    });
    t.is(r.status, 405, method);
    t.is(r.headers.get('allow'), 'POST');
  }
  const bad = await rpc('{"jsonrpc": "2.0", "id": 1, "method": ');
  t.is(bad.status, 400);
  t.like(await bad.json(), { jsonrpc: '2.0', error: { code: -32700 } });
  const notRpc = await rpc(JSON.stringify({ hello: 'world' }));
  t.is(notRpc.status, 400);
  t.like(await notRpc.json(), { jsonrpc: '2.0', error: { code: -32700 } });
  const unknownMethod = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'nope/nothing' }));
  t.is(unknownMethod.status, 200);
  t.like(await unknownMethod.json(), { id: 7, error: { code: -32601 } });

  const c = await connect(mcpKey);
  const unknown = await call(c, 'drop_tables');
  t.true(unknown.isError);
  t.regex(text(unknown), /drop_tables not found/);
  const badArgs = await call(c, 'list_issues', { limit: 1000 });
  t.true(badArgs.isError);
  t.regex(text(badArgs), /limit/);
  const missingPage = await call(c, 'get_page', { page: '/never-seen' });
  t.true(missingPage.isError);
  t.regex(text(missingPage), /^page not found: \/never-seen/);
  const noDeploy = await call(c, 'check_deploy', { deploy: 'v-unknown' });
  t.true(noDeploy.isError);
  await c.close();
});

test('each tool call writes one audit row: tool, key, site, duration; never the arguments', async (t) => {
  const key = await keyOf(tenant);
  const c = await connect(key.key);
  await call(c, 'get_page', { page: '/secret-marker-page' });
  await call(c, 'list_deploys');
  await c.close();
  // Written while the answer travels: there within moments of it.
  const rows = await eventually(async () => {
    const r = await stack.infra.database.db
      .selectFrom('audit_log')
      .selectAll()
      .where('actor_id', '=', key.id)
      .orderBy('id')
      .execute();
    return r.length >= 2 ? r : undefined;
  });
  t.deepEqual(
    rows.map((r) => [r.action, r.target_type, r.target_id, r.site_id, r.actor_type]),
    [
      ['mcp.tool_call', 'mcp_tool', 'get_page', tenant.siteId, 'key'],
      ['mcp.tool_call', 'mcp_tool', 'list_deploys', tenant.siteId, 'key'],
    ],
  );
  t.like(rows[0].summary as object, { tool: 'get_page', outcome: 'error' });
  t.like(rows[1].summary as object, { tool: 'list_deploys', outcome: 'ok' });
  t.is(typeof (rows[1].summary as { duration_ms: unknown }).duration_ms, 'number');
  t.false(JSON.stringify(rows).includes('secret-marker-page'));
});

const NODE = process.execPath;
const CLI = new URL('../cli.ts', import.meta.url).pathname;

test('over stdio: `friction mcp --url --key` (the SDK client spawns it) lists tools and the prompt, calls tools, gets post_deploy_check; stderr only for logs', async (t) => {
  const transport = new StdioClientTransport({
    command: NODE,
    args: [CLI, 'mcp', '--url', `${stack.baseUrl}/v1`, '--key', mcpKey],
    stderr: 'pipe',
    env: { PATH: process.env.PATH ?? '' },
  });
  const protocolErrors: Error[] = [];
  let stderr = '';
  transport.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
  const c = new Client({ name: 'friction-test-stdio', version: '1.0.0' });
  c.onerror = (e) => protocolErrors.push(e);
  await c.connect(transport);
  t.is((await c.listTools()).tools.length, 8);
  t.deepEqual(
    (await c.listPrompts()).prompts.map((p) => p.name),
    ['post_deploy_check'],
  );
  const check = await call(c, 'check_deploy', { deploy: seeded.fail.version });
  t.is((check.structuredContent as any).verdict, 'FAIL');
  const prompt = await c.getPrompt({ name: 'post_deploy_check', arguments: { deploy: seeded.pass.id } });
  t.regex(prompt.messages[0].content.type === 'text' ? prompt.messages[0].content.text : '', /verdict now: PASS\./);
  const missing = await call(c, 'get_issue', { issue_id: randomUUID() });
  t.true(missing.isError);
  await c.close();
  t.deepEqual(protocolErrors, []);
  t.regex(stderr, /friction mcp: serving MCP on stdio, forwarding to http:\/\/127\.0\.0\.1:\d+\/v1\/mcp/);
});

/** Runs `friction mcp` with `input` lines on stdin (then closes it); its exit code, stdout and stderr. */
function runStdio(
  args: string[],
  env: Record<string, string>,
  input: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawnRole(['ops/cli.ts', 'mcp', ...args], env, {
      clean: true,
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
    });
    let stdout = '';
    let stderr = '';
    p.stdout!.on('data', (b: Buffer) => {
      stdout += b.toString();
      // Close stdin once every request has its answer.
      if (stdout.split('\n').filter((l) => l.trim()).length >= input.filter((l) => l.includes('"id"')).length)
        p.stdin!.end();
    });
    p.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stdout, stderr }));
    for (const l of input) p.stdin!.write(`${l}\n`);
    if (!input.some((l) => l.includes('"id"'))) p.stdin!.end();
  });
}

test('stdio: env FRICTION_URL/FRICTION_KEY; stdout holds only JSON-RPC lines, even when the key is refused or the server is unreachable; usage errors exit 2 with stderr only', async (t) => {
  const init = initialize('raw');
  const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  const ok = await runStdio([], { FRICTION_URL: stack.baseUrl, FRICTION_KEY: mcpKey }, [init, list]);
  t.is(ok.code, 0, ok.stderr);
  const lines = ok.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.deepEqual(
    lines.map((l) => [l.jsonrpc, l.id]),
    [
      ['2.0', 1],
      ['2.0', 2],
    ],
  );
  t.is(lines[1].result.tools.length, 8);
  const refused = await runStdio(['--url', stack.baseUrl, '--key', 'svc_mcp_wrong'], {}, [init]);
  const answer = JSON.parse(refused.stdout.trim());
  t.like(answer, { jsonrpc: '2.0', id: 1, error: { code: -32000 } });
  t.regex(refused.stderr, /401/);
  const down = await runStdio(['--url', 'http://127.0.0.1:9', '--key', mcpKey], {}, [init]);
  t.like(JSON.parse(down.stdout.trim()), { jsonrpc: '2.0', id: 1, error: { code: -32000 } });
  const usage = await runStdio([], {}, []);
  t.is(usage.code, 2);
  t.is(usage.stdout, '');
  t.regex(usage.stderr, /--url \(or FRICTION_URL\) is required/);
});
