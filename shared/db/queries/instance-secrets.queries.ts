import type { Kysely } from 'kysely';
import type { Database } from '../database.ts';

/** The stored secret `name`, creating it with `candidate` when absent. Concurrent first starts agree on one value. */
export async function readOrCreateInstanceSecret(db: Kysely<Database>, name: string, candidate: string): Promise<string> {
  await db.insertInto('instance_secrets').values({ name, value: candidate }).onConflict((oc) => oc.column('name').doNothing()).execute();
  const row = await db.selectFrom('instance_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return row.value;
}
