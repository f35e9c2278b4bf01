import type { ExecutionContext, TestFn } from 'ava';
import { Kysely, PostgresDialect, type LogEvent } from 'kysely';
import pg from 'pg';
import { openDatabase, type DatabaseHandle } from '../db/connection.ts';
import type { Database } from '../db/database.ts';
import { testServices, uniqueTestId } from './services.ts';
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
  /** Removes the database (connections still open on it are ended). */
  drop(): Promise<void>;
}

/**
 * A database of the test's own: a clone of the run's migrated template, or with `empty` a new database with nothing
 * in it, not migrated (what a new PostgreSQL gives).
 */
export async function createTestDatabase(label = 'file', { empty = false } = {}): Promise<TestDatabase> {
  const name = `friction_test_${label
    .replace(/[^a-z0-9]/gi, '')
    .toLowerCase()
    .slice(0, 20)}_${uniqueTestId()}`;
  assertTestName(name);
  await admin((c) => c.query(`create database ${name}${empty ? '' : ` template ${testServices.templateDatabase}`}`));
  return {
    name,
    url: withDatabase(testServices.databaseUrl, name),
    drop: () => admin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
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
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 2 }) }),
    log,
  });
  t.teardown(async () => {
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

/** Drops this run's template (its per-file clones are dropped by their own tests). */
export async function dropTemplate(): Promise<void> {
  const name = testServices.templateDatabase;
  assertTestName(name);
  await admin((c) => c.query(`drop database if exists ${name} with (force)`));
}
