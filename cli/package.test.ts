/**
 * @friction/cli as a user gets it (issue 28, item 1): packed to a tarball, installed into an empty directory with
 * the machine's Node 20 and its npm, and run through its `friction` bin on Node 20 against a running Friction:
 * deploy record and check with their exit codes 0/1/2, doctor, --version. The bundle imports node built-ins only.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { packCli } from '../ops/pack.ts';
import { useStack } from '../ops/testing/stack.ts';
import { npmInstallOffline, SYSTEM_PATH } from '../shared/testing/packages.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = JSON.parse(readFileSync(path.join(here, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  bin: Record<string, string>;
  engines: { node: string };
  dependencies?: object;
};

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}
const run = (cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> =>
  new Promise((resolve) => {
    execFile(
      cmd,
      args,
      { cwd, env: { PATH: SYSTEM_PATH, HOME: cwd, ...env }, timeout: 120_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });

const stack = useStack(test, { processor: false });
// The package installed into an empty directory (`app`), from a tarball packed beside it.
const work = mkdtempSync(path.join(tmpdir(), 'friction-cli-pkg-'));
const app = path.join(work, 'app');
test.before(async () => {
  const tarball = await packCli(path.join(work, 'dist'), { refreshAction: false });
  mkdirSync(app);
  await npmInstallOffline(app, tarball);
});
test.after.always(() => rmSync(work, { recursive: true, force: true }));

const friction = (args: string[], env: Record<string, string> = {}) =>
  run(path.join(app, 'node_modules', '.bin', 'friction'), args, app, env);

test('the package is small, has no dependencies, and its bundle imports only node built-ins', async (t) => {
  t.is(pkg.name, '@friction/cli');
  const rootPkg = JSON.parse(readFileSync(path.join(here, '..', 'package.json'), 'utf8')) as { version: string };
  t.is(pkg.version, rootPkg.version, 'released with the service: doctor compares the two');
  t.is(pkg.dependencies, undefined);
  t.is(pkg.engines.node, '>=20');
  const bundle = readFileSync(path.join(app, 'node_modules', '@friction', 'cli', 'friction.mjs'), 'utf8');
  const specifiers = [...bundle.matchAll(/\bfrom\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g)].map(
    (m) => m[1] ?? m[2],
  );
  t.true(specifiers.length > 0);
  t.deepEqual(
    specifiers.filter((s) => !s.startsWith('node:')),
    [],
  );
  t.true(bundle.length < 64 * 1024, `${bundle.length} bytes`);
});

test("it runs on the machine's Node 20: --version, --help, a missing command is exit 2", async (t) => {
  const node = await run('node', ['--version'], app);
  t.regex(node.stdout, /^v20\./, 'the bin runs on Node 20 (#!/usr/bin/env node with the system PATH)');
  const v = await friction(['--version']);
  t.is(v.code, 0);
  t.is(v.stdout.trim(), pkg.version);
  const help = await friction(['--help']);
  t.is(help.code, 0);
  t.regex(help.stdout, /deploy[\s\S]*doctor/);
  t.is((await friction([])).code, 2);
  t.is((await friction(['nonsense'])).code, 2);
});

/** A new tenant of the stack, and the environment that points the CLI at it. */
async function newTenantEnv() {
  const tenant = await stack.newTenant();
  const env = {
    FRICTION_BASE_URL: stack.baseUrl,
    FRICTION_SECRET_KEY: tenant.secretKey,
    FRICTION_SITE_ID: tenant.siteId,
  };
  return { tenant, env };
}

test('deploy record and check against a running service: exit 0, 1 (WARN with --fail-on warn) and 2', async (t) => {
  const { tenant, env } = await newTenantEnv();
  const recorded = await friction(
    ['deploy', 'record', '--version', 'v-cli-1', '--commit', 'abc1234', '--idempotency-key', 'run-1'],
    env,
  );
  t.is(recorded.code, 0, recorded.stderr);
  t.regex(
    recorded.stdout,
    new RegExp(`deploy [0-9a-f-]{36} recorded: version v-cli-1 \\(production\\), site ${tenant.siteId}`),
  );
  // No sessions yet after the deploy: the verdict is WARN (not decided); --timeout 0 reads it once.
  const warn = await friction(['deploy', 'check', '--version', 'v-cli-1', '--timeout', '0'], env);
  t.is(warn.code, 0, warn.stderr);
  t.regex(warn.stdout, /^WARN: deploy .* version v-cli-1/);
  const gated = await friction(['deploy', 'check', '--version', 'v-cli-1', '--timeout', '0', '--fail-on', 'warn'], env);
  t.is(gated.code, 1, gated.stderr);
  // Flags instead of the environment, as the documented options.
  const byFlags = await friction([
    'deploy',
    'check',
    '--base-url',
    stack.baseUrl,
    '--key',
    tenant.secretKey,
    '--site',
    tenant.siteId,
    '--version',
    'v-cli-1',
    '--timeout',
    '0',
  ]);
  t.is(byFlags.code, 0, byFlags.stderr);
  const wrongKey = await friction(['deploy', 'record', '--version', 'v-cli-2'], {
    ...env,
    FRICTION_SECRET_KEY: 'svc_sec_00000000000000000000000000000000',
  });
  t.is(wrongKey.code, 2);
  t.regex(wrongKey.stderr, /HTTP 401/);
  t.is((await friction(['deploy', 'check', '--version', 'never-deployed', '--timeout', '0'], env)).code, 2);
  t.is((await friction(['deploy', 'record'], env)).code, 2, 'usage: --version missing');
});

test('doctor: every check passes with the right key and site (0), a wrong key or site fails (1), no URL is usage (2)', async (t) => {
  const { env } = await newTenantEnv();
  const good = await friction(['doctor'], env);
  t.is(good.code, 0, good.stdout + good.stderr);
  t.regex(
    good.stdout,
    new RegExp(`ok   version: service \\d+\\.\\d+\\.\\d+, CLI ${pkg.version.replace(/\./g, '\\.')}`),
  );
  t.regex(good.stdout, /ok   key: accepted; site .*: readable/);
  const badKey = await friction(['doctor'], {
    ...env,
    FRICTION_SECRET_KEY: 'svc_sec_00000000000000000000000000000000',
  });
  t.is(badKey.code, 1);
  t.regex(badKey.stdout, /FAIL key: refused/);
  const otherSite = await friction(['doctor'], { ...env, FRICTION_SITE_ID: (await stack.newTenant()).siteId });
  t.is(otherSite.code, 1);
  t.regex(otherSite.stdout, /FAIL site: .* is not a site this key may read/);
  t.is((await friction(['doctor'])).code, 2);
});

test('mcp: the installed bridge serves MCP on stdio against the running service on Node 20 (stdout is protocol only)', async (t) => {
  const tenant = await stack.newTenant();
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'ci', version: '1' } },
  };
  const lines = [
    init,
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  ];
  const answer = await new Promise<Run>((resolve) => {
    const child = execFile(
      path.join(app, 'node_modules', '.bin', 'friction'),
      ['mcp', '--url', stack.baseUrl, '--key', tenant.secretKey],
      {
        cwd: app,
        env: { PATH: SYSTEM_PATH, HOME: app },
        timeout: 120_000,
      },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  });
  t.is(answer.code, 0, answer.stderr);
  const out = answer.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { id: number; result: { serverInfo?: unknown; tools?: unknown[] } });
  t.deepEqual(
    out.map((m) => m.id),
    [1, 2],
  );
  t.truthy(out[0]!.result.serverInfo);
  t.true((out[1]!.result.tools ?? []).length > 0);
  t.regex(answer.stderr, /friction mcp: serving MCP on stdio/);
});
