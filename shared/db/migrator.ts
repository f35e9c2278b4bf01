import { sql, type Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import type { Logger } from '../logger.ts';
import { migrations } from './migrations/index.ts';

/** Arbitrary constant: the advisory lock every `migrate` takes, so concurrent starts never race. */
const MIGRATION_LOCK_ID = 7_202_611;

/**
 * Whether every known migration is recorded as applied: one read, no DDL. The Migrator itself first creates its
 * tables if missing and takes its own lock, which costs seconds on the embedded database at every start.
 */
async function upToDate(db: Kysely<any>): Promise<boolean> {
  try {
    const rows = await db.selectFrom('kysely_migration').select('name').execute();
    const applied = new Set(rows.map((r: { name: string }) => r.name));
    return Object.keys(migrations).every((name) => applied.has(name));
  } catch {
    // No migration table yet: a new database.
    return false;
  }
}

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
