/**
 * The GitHub Action (ci/action.yml, issue 28 item 1) through its script path: ci/run.sh run as the composite step
 * runs it (the inputs as the step's env, the runner's GITHUB_* variables, the system Node 20) against a running
 * Friction, with the exit codes the job sees. The YAML's inputs and the script's variables must agree, and the
 * committed bundle beside them must be a fresh build of cli/.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { parse } from 'yaml';
import { buildCliBundle } from '../cli/build.ts';
import { useStack } from './testing/stack.ts';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const ciDir = path.join(root, 'ci');

interface Action {
  inputs: Record<string, { required: boolean; default?: string }>;
  runs: { using: string; steps: { shell: string; run: string; env: Record<string, string> }[] };
}
const action = parse(readFileSync(path.join(ciDir, 'action.yml'), 'utf8')) as Action;

const stack = useStack(test, { processor: false });

/** What the composite step does: the step's env with each `${{ inputs.x }}` replaced by the input or its default. */
function stepEnv(inputs: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, expr] of Object.entries(action.runs.steps[0].env)) {
    const m = /^\$\{\{ inputs\.([a-z-]+) \}\}$/.exec(expr);
    if (!m) throw new Error(`${name}: ${expr} is not an input`);
    env[name] = inputs[m[1]] ?? action.inputs[m[1]].default ?? '';
  }
  return env;
}

function runAction(
  inputs: Record<string, string>,
  runner: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    PATH: '/usr/bin:/bin',
    HOME: '/tmp',
    GITHUB_ACTION_PATH: ciDir,
    GITHUB_SHA: 'f00dfeedcafe',
    GITHUB_RUN_ID: '4242',
    GITHUB_RUN_ATTEMPT: '1',
    ...runner,
    ...stepEnv(inputs),
  };
  return new Promise((resolve) => {
    execFile('bash', ['-c', action.runs.steps[0].run], { env, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test('action.yml is a composite action whose every input reaches the script', (t) => {
  t.is(action.runs.using, 'composite');
  const step = action.runs.steps[0];
  t.is(step.shell, 'bash');
  const mapped = new Set(Object.values(step.env).map((e) => /inputs\.([a-z-]+)/.exec(e)?.[1]));
  t.deepEqual(
    Object.keys(action.inputs).filter((i) => !mapped.has(i)),
    [],
  );
  const script = readFileSync(path.join(ciDir, 'run.sh'), 'utf8');
  for (const name of Object.keys(step.env).filter((n) => n.startsWith('INPUT_')))
    t.true(script.includes(name), `run.sh reads ${name}`);
  for (const name of Object.keys(action.inputs).filter((i) => action.inputs[i].required))
    t.true(['base-url', 'secret-key', 'version'].includes(name), name);
});

test('the committed ci/friction.mjs is a fresh build of the CLI (npm run pack refreshes it)', async (t) => {
  t.is(readFileSync(path.join(ciDir, 'friction.mjs'), 'utf8'), await buildCliBundle());
});

test('the action records the deploy (commit and idempotency key from the run) and gates on the verdict: 0, 1, 2', async (t) => {
  const tenant = await stack.newTenant();
  const inputs = {
    'base-url': stack.baseUrl,
    'secret-key': tenant.secretKey,
    'site-id': tenant.siteId,
    version: 'v-action-1',
    timeout: '0',
  };
  const passed = await runAction(inputs);
  t.is(passed.code, 0, passed.stderr);
  t.regex(passed.stdout, /recorded: version v-action-1/);
  t.regex(passed.stdout, /^WARN: deploy/m, 'no sessions after the deploy yet: undecided');
  const deploys = (await (
    await fetch(`${stack.baseUrl}/v1/query/deploys?site_id=${tenant.siteId}`, {
      headers: { authorization: `Bearer ${tenant.secretKey}` },
    })
  ).json()) as { data: { deploys: { version: string; commit_sha: string | null }[] } };
  t.is(deploys.data.deploys.length, 1);
  t.is(deploys.data.deploys[0].commit_sha, 'f00dfeedcafe', 'commit defaults to GITHUB_SHA');

  // Re-running the job (a second attempt of the same workflow run) records nothing new, and WARN fails it with
  // fail-on warn.
  const gated = await runAction({ ...inputs, 'fail-on': 'warn' }, { GITHUB_RUN_ATTEMPT: '2' });
  t.is(gated.code, 1, gated.stderr);
  const again = (await (
    await fetch(`${stack.baseUrl}/v1/query/deploys?site_id=${tenant.siteId}`, {
      headers: { authorization: `Bearer ${tenant.secretKey}` },
    })
  ).json()) as { data: { deploys: unknown[] } };
  t.is(again.data.deploys.length, 1, 'the run id made the second record idempotent');

  const recordOnly = await runAction({ ...inputs, version: 'v-action-2', check: 'false' }, { GITHUB_RUN_ID: '4243' });
  t.is(recordOnly.code, 0, recordOnly.stderr);
  t.notRegex(recordOnly.stdout, /WARN|PASS|FAIL/);

  const wrongKey = await runAction({ ...inputs, 'secret-key': 'svc_sec_00000000000000000000000000000000' });
  t.is(wrongKey.code, 2);
  t.regex(wrongKey.stderr, /HTTP 401/);
});
