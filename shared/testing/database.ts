import type { ExecutionContext, TestFn } from 'ava';
import { Kysely, PostgresDialect, type LogEvent } from 'kysely';
import pg from 'pg';
import { openDatabase, type DatabaseHandle } from '../db/connection.ts';
import type { Database } from '../db/database.ts';
import { testRunId, testServices, uniqueTestId } from './services.ts';
import { useResource } from './lifecycle.ts';

/** Destructive helpers refuse any database whose name lacks a `test` token (PostHog's guard). */
function assertTestName(name: string): void {
  if (!/(^|_)test(_|$)/.test(name)) throw new Error(`refusing to touch non-test database ${name}`);
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: testServices.databaseUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  /**
   * Removes the database (connections still open on it are ended). Under `npm test` it only bars and ends its
   * connections, and the runner drops it in the background (`dropClosedDatabases`).
   */
  drop(): Promise<void>;
}

/**
 * Set by `npm test`, whose runner drops the run's databases: on PostgreSQL 15 every DROP DATABASE forces an immediate
 * checkpoint (0.5-5 s on a busy server, and concurrent ones queue), which each test file would otherwise wait out.
 */
const runnerDrops = process.env.TEST_RUNNER_DROPS === '1';

/** The names of this run's databases (the template aside) as a LIKE pattern: `friction_test_<label>_<run>_<id>`. */
const runDatabases = `friction\\_test\\_%\\_${testRunId}\\_%`;

/**
 * A database of the test's own: a clone of the run's migrated template, or with `empty` a new database with nothing
 * in it, not migrated (what a new PostgreSQL gives).
 */
export async function createTestDatabase(label = 'file', { empty = false } = {}): Promise<TestDatabase> {
  const name = `friction_test_${label
    .replace(/[^a-z0-9]/gi, '')
    .toLowerCase()
    .slice(0, 20)}_${testRunId}_${uniqueTestId()}`;
  assertTestName(name);
  await admin((c) => c.query(`create database ${name}${empty ? '' : ` template ${testServices.templateDatabase}`}`));
  return {
    name,
    url: withDatabase(testServices.databaseUrl, name),
    drop: () =>
      admin(async (c) => {
        if (!runnerDrops) return void (await c.query(`drop database if exists ${name} with (force)`));
        // Closed: no new connection (what the runner's dropper looks for), and those still open are ended, as a drop's
        // `force` would. Dropped already (a second drop()): nothing to do.
        await c.query(`alter database ${name} allow_connections false`).catch((err: { code?: string }) => {
          if (err.code !== '3D000') throw err;
        });
        await c.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);
      }),
  };
}

/**
 * A migrated database of the test's own, opened as the service opens one: its `handle`, and `close` to close the
 * handle and drop the database. The usual fixture of a test file that works on the database without a whole stack.
 */
export async function withTestDatabase(
  label = 'file',
): Promise<TestDatabase & { handle: DatabaseHandle; close(): Promise<void> }> {
  const database = await createTestDatabase(label);
  const handle = await openDatabase({ url: database.url, dataDir: '' });
  return {
    ...database,
    handle,
    async close() {
      await handle.close();
      await database.drop();
    },
  };
}

/** The database handle the tests of a file share: created before them, closed and dropped after them. */
export function useTestDatabase<C>(test: TestFn<C>, label = 'file'): DatabaseHandle {
  let database: Awaited<ReturnType<typeof withTestDatabase>> | undefined;
  return useResource(
    test,
    async () => (database = await withTestDatabase(label)).handle,
    () => database?.close(),
  );
}

/**
 * A migrated database of the test's own as a bare Kysely (two connections) that calls `log` with every query, for a
 * test that counts statements; closed and dropped at the test's teardown.
 */
export async function loggedTestDatabase(
  t: ExecutionContext,
  label: string,
  log: (e: LogEvent) => void,
): Promise<Kysely<Database>> {
  const database = await createTestDatabase(label);
  const pool = new pg.Pool({ connectionString: database.url, max: 2 });
  // A connection the drop below terminates reports it on the pool (an idle one, or one a background read of the
  // code under test opened as the pool was ending): expected then, and a failure before. Without a listener it was an
  // uncaught exception that failed the whole file (key-resolver.int, whose resolver refreshes in the background).
  let dropping = false;
  pool.on('error', (err) => {
    if (!dropping) throw err;
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log });
  t.teardown(async () => {
    dropping = true;
    await db.destroy();
    await database.drop();
  });
  return db;
}

/** Recreates the template database and migrates it (run once per test run, before the workers start). */
export async function recreateTemplate(migrate: (url: string) => Promise<void>): Promise<void> {
  const name = testServices.templateDatabase;
  assertTestName(name);
  await admin(async (c) => {
    await c.query(`drop database if exists ${name} with (force)`);
    await c.query(`create database ${name}`);
  });
  await migrate(withDatabase(testServices.databaseUrl, name));
}

/**
 * The runner's dropper (`TEST_RUNNER_DROPS`): drops, one at a time in the background, every database of this run whose
 * test has closed it (`drop()` barred its connections). `stop()` ends the loop and drops the run's remaining
 * databases, closed or not (a file that crashed or timed out never closed its own), and the template.
 */
export function dropClosedDatabases(everyMs = 1000): {
  /** Resolves to how many databases the dropper dropped, the time it spent on them and on those left at the end. */
  stop(): Promise<{ dropped: number; ms: number; atEndMs: number }>;
} {
  let running = true;
  let wake = () => {};
  const done = { dropped: 0, ms: 0, atEndMs: 0 };
  const dropAll = async (c: pg.Client, closedOnly: boolean) => {
    const { rows } = await c.query<{ datname: string }>(
      `select datname from pg_database where datname like $1${closedOnly ? ' and not datallowconn' : ''} order by oid`,
      [runDatabases],
    );
    for (const { datname } of rows) {
      assertTestName(datname);
      const t0 = performance.now();
      await c.query(`drop database if exists ${datname} with (force)`);
      done.dropped++;
      done.ms += performance.now() - t0;
    }
  };
  const loop = admin(async (c) => {
    while (running) {
      // A failed drop is tried again on the next round, and at the end.
      await dropAll(c, true).catch((err: Error) => process.stderr.write(`dropping test databases: ${err.message}\n`));
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, everyMs);
      });
    }
    const t0 = performance.now();
    await dropAll(c, false);
    done.atEndMs = performance.now() - t0;
  });
  return {
    async stop() {
      running = false;
      wake();
      try {
        await loop;
      } finally {
        await dropTemplate();
      }
      return done;
    },
  };
}

/** Drops this run's template (its per-file clones are dropped by their own tests or the runner's dropper). */
async function dropTemplate(): Promise<void> {
  const name = testServices.templateDatabase;
  assertTestName(name);
  await admin((c) => c.query(`drop database if exists ${name} with (force)`));
}
