import type { Kysely } from 'kysely';
import type { Database } from '../database.ts';

/** The stored SDK config (raw JSON) of every environment of a site. */
export async function findSdkConfigs(
  db: Kysely<Database>,
  siteId: string,
): Promise<{ environment: string; config: unknown }[]> {
  return db
    .selectFrom('environments as e')
    .innerJoin('sdk_configs as c', 'c.environment_id', 'e.id')
    .select(['e.name as environment', 'c.config'])
    .where('e.site_id', '=', siteId)
    .execute();
}
