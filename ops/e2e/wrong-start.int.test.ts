/**
 * Roles refuse to start wrong (issue 28, item 3), each as a real `friction` process: one line on stderr naming what
 * is wrong and what to do, exit 1, no stack trace. A server deployment never falls back to an embedded part; a
 * role on a database behind its code says `friction migrate`; a second process on an embedded data directory is
 * told who holds it; database connection errors are said in words.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { freePort } from '../../shared/testing/nats-server.ts';
import { createEmptyTestDatabase } from '../../shared/testing/database.ts';
import { testServices } from '../../shared/testing/services.ts';
import { eventually } from '../testing/sdk-batch.ts';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const NODE = path.join(root, 'node_modules', '.bin', 'node');

interface Run {
  code: number | null;
  stderr: string;
}

/** Only the variables given: nothing of the test runner's environment leaks into the role. */
function friction(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      NODE,
      ['ops/cli.ts', ...args],
      {
        cwd: root,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          FRICTION_DATA_DIR: '/nonexistent-friction-test-dir',
          LOG_LEVEL: 'silent',
          PORT: '0',
          HOST: '127.0.0.1',
          ...env,
        },
        timeout: 90_000,
      },
      (err, _stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr });
      },
    );
  });
}

/** Exit 1 and exactly one line, starting `friction: `, matching the pattern. */
function oneLine(t: import('ava').ExecutionContext, r: Run, pattern: RegExp): void {
  t.is(r.code, 1, r.stderr);
  const lines = r.stderr.trimEnd().split('\n');
  t.is(lines.length, 1, r.stderr);
  t.regex(lines[0], /^friction: /);
  t.regex(lines[0], pattern);
}

const services = { NATS_URL: testServices.natsUrl, REDIS_URL: testServices.redisUrl };

test('server mode never falls back to an embedded part: the missing settings are named', async (t) => {
  const db = testServices.databaseUrl;
  oneLine(
    t,
    await friction(['ingest'], { DATABASE_URL: db }),
    /`friction ingest` is one role of a split deployment and needs NATS_URL, REDIS_URL: set them/,
  );
  oneLine(t, await friction(['processor']), /needs DATABASE_URL, NATS_URL: set them/);
  oneLine(t, await friction(['dispatcher'], { NATS_URL: testServices.natsUrl }), /needs DATABASE_URL: set it/);
  oneLine(t, await friction(['api'], { DATABASE_URL: db, NATS_URL: testServices.natsUrl }), /needs REDIS_URL: set it/);
  oneLine(
    t,
    await friction(['start'], { FRICTION_MODE: 'server' }),
    /FRICTION_MODE=server and needs DATABASE_URL, NATS_URL, REDIS_URL/,
  );
  oneLine(
    t,
    await friction(['start'], { NATS_URL: testServices.natsUrl }),
    /NATS_URL is set, so this is a server deployment and needs DATABASE_URL, REDIS_URL/,
  );
  oneLine(t, await friction(['migrate'], { FRICTION_MODE: 'server' }), /FRICTION_MODE=server and needs DATABASE_URL/);
});

test('every role on an unmigrated database says to run friction migrate', async (t) => {
  const empty = await createEmptyTestDatabase('unmigrated');
  t.teardown(() => empty.drop());
  for (const role of ['api', 'ingest', 'processor', 'dispatcher']) {
    oneLine(
      t,
      await friction([role], { DATABASE_URL: empty.url, ...services }),
      /is behind this version of Friction \(\d+ migrations not applied, from 0001_create_core\): run `friction migrate` first/,
    );
  }
});

test('database errors in words: no such database, no such role, connection refused (URL without its password)', async (t) => {
  const base = new URL(testServices.databaseUrl);
  const noDb = new URL(base);
  noDb.pathname = '/friction_test_no_such_database';
  oneLine(
    t,
    await friction(['api'], { DATABASE_URL: noDb.toString(), ...services }),
    /database "friction_test_no_such_database" does not exist on .*: create it/,
  );
  const noRole = new URL(base);
  noRole.username = 'friction_test_no_such_role';
  noRole.password = 'hunter2';
  const r = await friction(['processor'], { DATABASE_URL: noRole.toString(), ...services });
  oneLine(
    t,
    r,
    /role "friction_test_no_such_role" does not exist|refused user "friction_test_no_such_role"|password authentication failed for user "friction_test_no_such_role"/,
  );
  t.false(r.stderr.includes('hunter2'), 'the password is never printed');
  const port = await freePort();
  oneLine(
    t,
    await friction(['api'], { DATABASE_URL: `postgres://friction:hunter2@127.0.0.1:${port}/friction`, ...services }),
    new RegExp(
      `postgres://friction:\\*\\*\\*@127\\.0\\.0\\.1:${port}/friction \\(DATABASE_URL\\): connection refused by 127\\.0\\.0\\.1:${port}`,
    ),
  );
});

test('a second process on an embedded data directory is told which process holds it', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'friction-lock-'));
  const port = await freePort();
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    FRICTION_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    PORT: String(port),
    HOST: '127.0.0.1',
  };
  const first = spawn(NODE, ['ops/cli.ts', 'start'], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  t.teardown(async () => {
    if (first.exitCode === null && first.signalCode === null) {
      const exited = new Promise((r) => first.once('exit', r));
      first.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });
  await eventually(
    async () => {
      if (first.exitCode !== null) throw new Error(`the first friction start exited ${first.exitCode}`);
      return (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200;
    },
    120_000,
    200,
  );
  const holder = new RegExp(
    `another Friction process \\(pid ${first.pid}\\) holds the embedded data directory ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(FRICTION_DATA_DIR\\)`,
  );
  oneLine(t, await friction(['start'], { FRICTION_DATA_DIR: dataDir }), holder);
  oneLine(t, await friction(['migrate'], { FRICTION_DATA_DIR: dataDir }), holder);
  // Once the holder has stopped, the directory is free again.
  const exited = new Promise((r) => first.once('exit', r));
  first.kill('SIGTERM');
  await exited;
  const again = await friction(['migrate'], { FRICTION_DATA_DIR: dataDir });
  t.is(again.code, 0, again.stderr);
});
