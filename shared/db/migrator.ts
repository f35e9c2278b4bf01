import { sql, type Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import type { Logger } from '../logger.ts';
import { migrations } from './migrations/index.ts';

/** Arbitrary constant: the advisory lock every `migrate` takes, so concurrent starts never race. */
const MIGRATION_LOCK_ID = 7_202_611;

/** Applies every pending migration under a session advisory lock. Idempotent. */
export async function migrateToLatest(db: Kysely<any>, log?: Logger): Promise<string[]> {
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
