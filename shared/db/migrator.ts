import { sql, type Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import type { Logger } from '../logger.ts';
import { migrations } from './migrations/index.ts';

/** Arbitrary constant: the advisory lock every `migrate` takes, so concurrent starts never race. */
const MIGRATION_LOCK_ID = 7_202_611;

/** Migrations of this code not yet applied (`pending`) and applied ones this code does not know (`unknown`). */
export async function schemaStatus(db: Kysely<any>): Promise<{ pending: string[]; unknown: string[] }> {
  let applied: Set<string>;
  try {
    applied = new Set(
      (await db.selectFrom('kysely_migration').select('name').execute()).map((r: { name: string }) => r.name),
    );
  } catch (err) {
    // 42P01: no migration table yet, a database never migrated. Anything else (connection lost) is the caller's.
    if ((err as { code?: string }).code !== '42P01') throw err;
    applied = new Set();
  }
  const known = Object.keys(migrations);
  return { pending: known.filter((n) => !applied.has(n)), unknown: [...applied].filter((n) => !(n in migrations)) };
}

/** Applies every pending migration under a session advisory lock. Idempotent; a database already up to date costs one read. */
export async function migrateToLatest(db: Kysely<any>, log?: Logger): Promise<string[]> {
  // One read, no DDL: the Migrator itself first creates its tables if missing and takes its own lock, which costs
  // seconds on the embedded database at every start.
  if ((await schemaStatus(db)).pending.length === 0) return [];
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
