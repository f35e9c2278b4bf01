import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';

type Db = Kysely<Database> | Transaction<Database>;

export interface IntegrationRow {
  id: string;
  org_id: string;
  site_id: string;
  provider: string;
  config: Record<string, unknown>;
  secret_fields: string[];
  created_at: Date;
  updated_at: Date;
}

/** Never `secrets_sealed`: the API has no reason to read a credential back. */
const COLUMNS = ['id', 'org_id', 'site_id', 'provider', 'config', 'secret_fields', 'created_at', 'updated_at'] as const;

/** The org's integrations on live sites; `siteId` narrows to one site. */
export async function listIntegrations(db: Db, orgId: string, siteId?: string): Promise<IntegrationRow[]> {
  let q = db
    .selectFrom('integrations as i')
    .innerJoin('sites as s', 's.id', 'i.site_id')
    .select(COLUMNS.map((c) => `i.${c}` as const))
    .where('i.org_id', '=', orgId)
    .where('s.deleted_at', 'is', null);
  if (siteId) q = q.where('i.site_id', '=', siteId);
  return q.orderBy('i.created_at').orderBy('i.id').execute();
}

export async function findIntegrationForUpdate(
  trx: Transaction<Database>,
  id: string,
): Promise<IntegrationRow | undefined> {
  return trx.selectFrom('integrations').select(COLUMNS).where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Inserts unless the site already has this provider; returns undefined then. */
export async function insertIntegration(
  trx: Transaction<Database>,
  i: {
    id: string;
    orgId: string;
    siteId: string;
    provider: string;
    config: Record<string, unknown>;
    secretFields: string[];
    secretsSealed: string;
  },
): Promise<IntegrationRow | undefined> {
  return trx
    .insertInto('integrations')
    .values({
      id: i.id,
      org_id: i.orgId,
      site_id: i.siteId,
      provider: i.provider,
      config: JSON.stringify(i.config),
      secret_fields: i.secretFields,
      secrets_sealed: i.secretsSealed,
    })
    .onConflict((oc) => oc.columns(['site_id', 'provider']).doNothing())
    .returning(COLUMNS)
    .executeTakeFirst();
}

export async function deleteIntegration(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.deleteFrom('integrations').where('id', '=', id).execute();
}
