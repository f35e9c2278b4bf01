import type { Kysely } from 'kysely';
import type { Database } from '../database.ts';

/** The stored SDK config of one site environment (raw JSON), or undefined when the environment does not exist. */
export async function findSdkConfig(db: Kysely<Database>, siteId: string, environment: string): Promise<unknown> {
  const row = await db
    .selectFrom('environments as e')
    .innerJoin('sdk_configs as c', 'c.environment_id', 'e.id')
    .select('c.config')
    .where('e.site_id', '=', siteId)
    .where('e.name', '=', environment)
    .executeTakeFirst();
  return row?.config;
}
