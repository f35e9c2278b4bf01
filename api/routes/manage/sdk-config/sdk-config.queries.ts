import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../../../shared/db/database.ts';

type Db = Kysely<Database> | Transaction<Database>;

export interface EnvironmentConfigRow {
  environment_id: string;
  environment: string;
  config: Record<string, unknown>;
  updated_at: Date;
}

const base = (db: Db) =>
  db.selectFrom('environments as e').innerJoin('sdk_configs as c', 'c.environment_id', 'e.id').select(['e.id as environment_id', 'e.name as environment', 'c.config', 'c.updated_at']);

export async function listEnvironmentConfigs(db: Db, siteId: string): Promise<EnvironmentConfigRow[]> {
  return base(db).where('e.site_id', '=', siteId).orderBy('e.created_at').orderBy('e.name').execute();
}

export async function findEnvironmentConfigForUpdate(trx: Transaction<Database>, siteId: string, environment: string): Promise<EnvironmentConfigRow | undefined> {
  return base(trx).where('e.site_id', '=', siteId).where('e.name', '=', environment).forUpdate('c').executeTakeFirst();
}

export async function updateEnvironmentConfig(trx: Transaction<Database>, environmentId: string, config: Record<string, unknown>, now: Date): Promise<void> {
  await trx.updateTable('sdk_configs').set({ config: JSON.stringify(config), updated_at: now }).where('environment_id', '=', environmentId).execute();
}
