import test from 'ava';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, kill, spawnRole, waitReady } from '../../shared/testing/processes.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson, postJson } from '../../shared/testing/http-client.ts';

// `friction start` as a new user runs it: its own OS process, no service URLs (the embedded default), one port.

const start = (dataDir: string, port: number): ChildProcess =>
  spawnRole(
    ['ops/cli.ts', 'start'],
    {
      FRICTION_DATA_DIR: dataDir,
      PORT: String(port),
      // None of the runner's service URLs: the embedded default.
      DATABASE_URL: undefined,
      NATS_URL: undefined,
      REDIS_URL: undefined,
      PUBLIC_BASE_URL: undefined,
    },
    { stdout: 'pipe' },
  );

/**
 * Waits until the port answers /healthz (the process alive) and returns the time it took and whether that first answer
 * said `starting`: the port opens before the slow start-up work (issue 12's target is 5 s to an open port on a warm
 * machine). The time is logged, not asserted: on a busy machine it measures the machine; the order is the property.
 */
async function firstHealthAnswer(
  base: string,
  proc: ChildProcess,
  spawnedAt: number,
): Promise<{ ms: number; starting: boolean }> {
  const res = await waitReady(`${base}/healthz`, 60_000, proc);
  const body = (await res.json()) as { data: { status?: string } };
  return { ms: performance.now() - spawnedAt, starting: body.data.status === 'starting' };
}

/**
 * Polls /readyz as a harness would, and reads credentials.json the moment it answers. It waits for a condition,
 * not a fixed minute: start-up on a busy machine (the embedded database's first init) can take longer, so it polls
 * for as long as ava's inactivity timeout allows, and a process that died is named in the failure.
 */
async function credentialsWhenReady(base: string, dataDir: string, proc: ChildProcess) {
  await waitReady(`${base}/readyz`, 115_000, proc);
  const file = join(dataDir, 'credentials.json');
  if (!existsSync(file)) throw new Error('credentials.json missing while /readyz answers');
  return { file, creds: JSON.parse(readFileSync(file, 'utf8')) };
}

test('friction start: the port answers before the start-up work (starting, then ready); credentials.json exists once /readyz answers; the printed keys send a batch and read its score; a restart keeps them', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'friction-start-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let spawnedAt = performance.now();
  let proc = start(dataDir, port);
  let printed = '';
  proc.stdout!.on('data', (c: Buffer) => (printed += c.toString()));
  t.teardown(async () => {
    await kill(proc);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const first = await firstHealthAnswer(base, proc, spawnedAt);
  t.log(`first start: port answering after ${Math.round(first.ms)} ms`);
  t.true(first.starting, 'the port answers while start-up work is still under way');
  const { file, creds } = await credentialsWhenReady(base, dataDir, proc);
  t.deepEqual(Object.keys(creds).sort(), ['base_url', 'org_id', 'owner', 'publishable_key', 'secret_key', 'site_id']);
  t.deepEqual(Object.keys(creds.owner).sort(), ['email', 'password', 'token']);
  t.is(creds.base_url, `http://localhost:${port}`);
  t.regex(creds.publishable_key, /^svc_pub_/);
  t.regex(creds.secret_key, /^svc_sec_/);
  t.is(statSync(file).mode & 0o777, 0o600, 'secrets are readable by their owner only');
  await eventually(async () => printed.includes(creds.publishable_key) && printed.includes(creds.secret_key), {
    timeoutMs: 5000,
    stepMs: 20,
  });

  const batch = sdkBatch({ page: '/checkout', events: 3 });
  const sent = await postJson(`${base}/v1/ingest`, batch, { authorization: `Bearer ${creds.publishable_key}` });
  t.deepEqual(sent.body, { data: { accepted: 3, duplicates: 0 }, error: null });
  const scores = await eventually(
    async () => {
      const r = await getJson(`${base}/v1/query/scores?site_id=${creds.site_id}`, {
        authorization: `Bearer ${creds.secret_key}`,
      });
      return r.body.data?.pages.length ? r.body.data : undefined;
    },
    { timeoutMs: 5000, stepMs: 50 },
  );
  t.is(scores.pages[0].page, '/checkout');
  const login = await postJson(`${base}/v1/auth/login`, { email: creds.owner.email, password: creds.owner.password });
  t.is(login.status, 200);

  // Restart on the same data directory: same tenant and keys, the stored score still there.
  await kill(proc);
  spawnedAt = performance.now();
  proc = start(dataDir, port);
  const restarted = await firstHealthAnswer(base, proc, spawnedAt);
  t.log(`restart: port answering after ${Math.round(restarted.ms)} ms`);
  t.true(restarted.starting, 'the port answers while start-up work is still under way');
  // A batch sent while starting is refused with 503 and Retry-After (the SDK retries it), never accepted and lost.
  // Each round sends the batch, then asks /healthz: while /healthz still says starting, the batch was answered
  // during start-up.
  let refused: { status: number; body: any; retryAfter: string | null } | undefined;
  const accepted: unknown[] = [];
  await eventually(
    async () => {
      const res = await fetch(`${base}/v1/ingest`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${creds.publishable_key}` },
        body: JSON.stringify(sdkBatch({ page: '/during-start', events: 3 })),
      });
      const answer = { status: res.status, body: await res.json(), retryAfter: res.headers.get('retry-after') };
      const health = await getJson(`${base}/healthz`);
      if (answer.status === 202) accepted.push(answer.body);
      if (health.body.data.status === 'starting') refused ??= answer;
      return health.body.data.status === 'ok';
    },
    { timeoutMs: 115_000, stepMs: 20 },
  );
  t.truthy(refused, 'the port answered before the roles were ready');
  t.is(refused!.status, 503);
  t.is(refused!.retryAfter, '1');
  t.like(refused!.body, { data: null, error: { code: 'unavailable', status: 503 } });
  const again = await credentialsWhenReady(base, dataDir, proc);
  // The first batches the roles accept after a restart are stored (the embedded TimescaleDB once dead-lettered them).
  if (accepted.length === 0) {
    const first = await postJson(`${base}/v1/ingest`, sdkBatch({ page: '/during-start', events: 3 }), {
      authorization: `Bearer ${creds.publishable_key}`,
    });
    t.is(first.status, 202);
  }
  await eventually(
    async () => {
      const r = await getJson(`${base}/v1/query/scores?site_id=${creds.site_id}`, {
        authorization: `Bearer ${creds.secret_key}`,
      });
      return r.body.data?.pages.some((p: { page: string }) => p.page === '/during-start');
    },
    { timeoutMs: 10_000, stepMs: 50 },
  );
  t.deepEqual({ ...again.creds, owner: undefined }, { ...creds, owner: undefined });
  const after = await getJson(`${base}/v1/query/scores?site_id=${creds.site_id}`, {
    authorization: `Bearer ${creds.secret_key}`,
  });
  t.true(after.body.data.pages.some((p: { page: string }) => p.page === '/checkout'));
});
