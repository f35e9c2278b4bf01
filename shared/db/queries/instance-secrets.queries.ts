import type { Kysely } from 'kysely';
import type { Database } from '../database.ts';

/**
 * The secret older versions generated into the database (row `master`). Read only to move it out into the data
 * directory's secret file: a secret in the database makes a dump a full compromise.
 */
export async function findStoredInstanceSecret(db: Kysely<Database>): Promise<string | null> {
  const row = await db.selectFrom('instance_secrets').select('value').where('name', '=', 'master').executeTakeFirst();
  return row?.value ?? null;
}

export async function deleteStoredInstanceSecret(db: Kysely<Database>): Promise<void> {
  await db.deleteFrom('instance_secrets').where('name', '=', 'master').execute();
}
