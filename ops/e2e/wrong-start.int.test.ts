import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { freePort } from '../../shared/testing/processes.ts';
import { createTestDatabase } from '../../shared/testing/database.ts';
import { seedEmbeddedDataDir } from '../../shared/testing/embedded-template.ts';
import { testServices } from '../../shared/testing/services.ts';
import { kill, runFriction, spawnRole, waitReady, type Run } from '../../shared/testing/processes.ts';

/** Only the variables given: nothing of the test runner's environment leaks into the role. */
const friction = (args: string[], env: Record<string, string> = {}): Promise<Run> =>
  runFriction(
    args,
    { FRICTION_DATA_DIR: '/nonexistent-friction-test-dir', PORT: '0', HOST: '127.0.0.1', ...env },
    {
      timeoutMs: 90_000,
    },
  );

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
  const empty = await createTestDatabase('unmigrated', { empty: true });
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
  // The lock is what this checks, not a first start (ops/e2e/start.int.test.ts has one): a migrated database.
  await seedEmbeddedDataDir(dataDir);
  const port = await freePort();
  const first = spawnRole(['ops/cli.ts', 'start'], { FRICTION_DATA_DIR: dataDir, PORT: String(port) }, { clean: true });
  t.teardown(async () => {
    await kill(first);
    rmSync(dataDir, { recursive: true, force: true });
  });
  await waitReady(`http://127.0.0.1:${port}/readyz`, 120_000, first);
  const holder = new RegExp(
    `another Friction process \\(pid ${first.pid}\\) holds the embedded data directory ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(FRICTION_DATA_DIR\\)`,
  );
  oneLine(t, await friction(['start'], { FRICTION_DATA_DIR: dataDir }), holder);
  oneLine(t, await friction(['migrate'], { FRICTION_DATA_DIR: dataDir }), holder);
  // Once the holder has stopped, the directory is free again.
  await kill(first);
  const again = await friction(['migrate'], { FRICTION_DATA_DIR: dataDir });
  t.is(again.code, 0, again.stderr);
});
