import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import test from 'ava';
import { startTestStack } from '../testing/stack.ts';
import { runFriction, type Run } from '../../shared/testing/processes.ts';

const friction = (args: string[], env: Record<string, string> = {}): Promise<Run> =>
  runFriction(args, { FRICTION_DATA_DIR: '/nonexistent-friction-test-dir', ...env });

/** One line (commander adds a hint line for usage errors), no stack frames. */
function oneClearLine(t: import('ava').ExecutionContext, r: Run, pattern: RegExp): void {
  t.not(r.code, 0, 'non-zero exit');
  t.notRegex(r.stderr, /^\s+at /m, 'no stack trace');
  const first = r.stderr.split('\n')[0];
  t.regex(first, /^friction: /);
  t.regex(first, pattern, r.stderr);
}

const listen = (): Promise<Server> =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => resolve(s));
  });

test('port in use: said at once, before the start-up work', async (t) => {
  const busy = await listen();
  try {
    const port = (busy.address() as { port: number }).port;
    const dataDir = path.join(tmpdir(), `friction-cli-${process.pid}-${port}`);
    const r = await friction(['start'], { PORT: String(port), HOST: '127.0.0.1', FRICTION_DATA_DIR: dataDir });
    oneClearLine(t, r, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is in use \\(PORT\\)`));
    // The embedded database would have created the data directory: nothing of the start-up ran.
    t.false(existsSync(dataDir), 'answered before the embedded database was opened');
    t.log(`answered in ${r.ms} ms (machine shared by parallel test processes)`);
  } finally {
    busy.close();
  }
});

test('NATS down: names NATS_URL and the URL', async (t) => {
  const free = await listen();
  const port = (free.address() as { port: number }).port;
  free.close();
  const r = await friction(['processor'], {
    PORT: '0',
    NATS_URL: `nats://127.0.0.1:${port}`,
    DATABASE_URL: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  });
  oneClearLine(t, r, new RegExp(`cannot reach NATS at nats://127\\.0\\.0\\.1:${port} \\(NATS_URL\\)`));
});

test('database down: names DATABASE_URL, hides the password; migrate retries first', async (t) => {
  const free = await listen();
  const port = (free.address() as { port: number }).port;
  free.close();
  const url = `postgres://friction:hunter2@127.0.0.1:${port}/friction`;
  const api = await friction(['api'], {
    PORT: '0',
    DATABASE_URL: url,
    NATS_URL: process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222',
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
  });
  oneClearLine(
    t,
    api,
    /cannot reach the database at postgres:\/\/friction:\*\*\*@127\.0\.0\.1:\d+\/friction \(DATABASE_URL\)/,
  );
  t.false(api.stderr.includes('hunter2'));
  const migrate = await friction(['migrate'], {
    DATABASE_URL: url,
    MIGRATE_CONNECT_TIMEOUT_MS: '2500',
    LOG_LEVEL: 'warn',
  });
  oneClearLine(
    t,
    {
      ...migrate,
      stderr: migrate.stderr
        .split('\n')
        .filter((l) => !l.startsWith('{'))
        .join('\n'),
    },
    /cannot reach the database/,
  );
  t.true(migrate.ms >= 2000, 'it kept trying for MIGRATE_CONNECT_TIMEOUT_MS');
  t.regex(migrate.stdout + migrate.stderr, /retrying in 1 s/, 'a line per failed attempt');
});

test('bad option values and commands: one line naming the option, exit 1; every command has --help', async (t) => {
  oneClearLine(
    t,
    await friction(['demo', '--sessions', 'abc']),
    /--sessions.*'abc' is invalid\. must be a whole number/,
  );
  oneClearLine(t, await friction(['demo', '--base-url', 'localhost']), /--base-url.*must be an http\(s\) URL/);
  oneClearLine(t, await friction(['demo', '--key', 'svc_sec_x']), /--key.*must be a publishable key/);
  oneClearLine(t, await friction(['recompute']), /required option '--site <uuid>'/);
  oneClearLine(t, await friction(['recompute', '--site', 'x']), /--site.*must be a site id/);
  oneClearLine(t, await friction(['nonsense']), /unknown command 'nonsense'/);
  oneClearLine(t, await friction(['start'], { PORT: 'eighty' }), /PORT/);
  const help = await friction(['demo', '--help']);
  t.is(help.code, 0);
  for (const o of ['--sessions', '--base-url', '--key']) t.true(help.stdout.includes(o), `demo --help lists ${o}`);
  t.regex((await friction(['--help'])).stdout, /start[\s\S]*migrate[\s\S]*demo[\s\S]*bench/);
});

test('demo: unreachable URL and wrong key are one line and exit 1', async (t) => {
  const demo = (baseUrl: string, key: string) =>
    friction(['demo', '--sessions', '2', '--base-url', baseUrl, '--key', key]);
  const free = await listen();
  const port = (free.address() as { port: number }).port;
  free.close();
  oneClearLine(
    t,
    await demo(`http://127.0.0.1:${port}`, 'svc_pub_x'),
    new RegExp(`cannot reach http://127\\.0\\.0\\.1:${port}/v1/ingest \\(--base-url\\): connection refused`),
  );
  const stack = await startTestStack({ processor: false });
  try {
    const wrong = await demo(stack.baseUrl, 'svc_pub_00000000000000000000000000000000');
    oneClearLine(t, wrong, /refused the key svc_pub_0000… \(--key\): 401/);
    const right = await demo(stack.baseUrl, stack.tenant.publishableKey);
    t.is(right.code, 0, right.stderr);
    t.regex(right.stdout, /sent 2 sessions/);
  } finally {
    await stack.stop();
  }
});
