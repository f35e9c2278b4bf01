import { sql, type Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import type { Logger } from '../logger.ts';
import { migrations } from './migrations/index.ts';

/** Arbitrary constant: the advisory lock every `migrate` takes, so concurrent starts never race. */
const MIGRATION_LOCK_ID = 7_202_611;

/**
 * The migrations this build knows that the database has not recorded as applied, in order: one read, no DDL. The
 * Migrator itself first creates its tables if missing and takes its own lock, which costs seconds on the embedded
 * database at every start. A database ahead of the build (migrations it does not know) is not behind: a rolling
 * deploy runs the old build against the new schema for a while.
 */
export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  let applied: Set<string>;
  try {
    const rows = await db.selectFrom('kysely_migration').select('name').execute();
    applied = new Set(rows.map((r: { name: string }) => r.name));
  } catch {
    // No migration table yet: a new database.
    applied = new Set();
  }
  return Object.keys(migrations).filter((name) => !applied.has(name));
}

const upToDate = async (db: Kysely<any>): Promise<boolean> => (await pendingMigrations(db)).length === 0;

/** Applies every pending migration under a session advisory lock. Idempotent; a database already up to date costs one read. */
export async function migrateToLatest(db: Kysely<any>, log?: Logger): Promise<string[]> {
  if (await upToDate(db)) return [];
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_ID})`.execute(conn);
    try {
      const migrator = new Migrator({ db: conn, provider: { getMigrations: async () => migrations } });
      const { error, results } = await migrator.migrateToLatest();
      for (const r of results ?? []) log?.info({ migration: r.migrationName, status: r.status }, 'migration');
      if (error) throw error;
      return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`.execute(conn);
    }
  });
}
