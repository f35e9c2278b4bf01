import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';

type Db = Kysely<Database> | Transaction<Database>;

export interface EnvironmentConfigRow {
  environment_id: string;
  environment: string;
  config: Record<string, unknown>;
  updated_at: Date;
}

const base = (db: Db) =>
  db
    .selectFrom('environments as e')
    .innerJoin('sdk_configs as c', 'c.environment_id', 'e.id')
    .select(['e.id as environment_id', 'e.name as environment', 'c.config', 'c.updated_at']);

export async function listEnvironmentConfigs(db: Db, siteId: string): Promise<EnvironmentConfigRow[]> {
  return base(db).where('e.site_id', '=', siteId).orderBy('e.created_at').orderBy('e.name').execute();
}

export async function findEnvironmentConfigForUpdate(
  trx: Transaction<Database>,
  siteId: string,
  environment: string,
): Promise<EnvironmentConfigRow | undefined> {
  return base(trx).where('e.site_id', '=', siteId).where('e.name', '=', environment).forUpdate('c').executeTakeFirst();
}

export async function updateEnvironmentConfig(
  trx: Transaction<Database>,
  environmentId: string,
  config: Record<string, unknown>,
  now: Date,
): Promise<void> {
  await trx
    .updateTable('sdk_configs')
    .set({ config: JSON.stringify(config), updated_at: now })
    .where('environment_id', '=', environmentId)
    .execute();
}

/**
 * Creates the site's environment `name` with `config` unless it exists. Concurrent creations of one name agree:
 * the losing insert waits for the winner and does nothing (no unique violation, no 500).
 */
export async function ensureEnvironment(
  trx: Transaction<Database>,
  e: { id: string; siteId: string; name: string; config: Record<string, unknown> },
): Promise<void> {
  const inserted = await trx
    .insertInto('environments')
    .values({ id: e.id, site_id: e.siteId, name: e.name })
    .onConflict((oc) => oc.columns(['site_id', 'name']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted)
    await trx
      .insertInto('sdk_configs')
      .values({ environment_id: e.id, site_id: e.siteId, config: JSON.stringify(e.config) })
      .execute();
}
