import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';

type Db = Kysely<Database> | Transaction<Database>;

const COLUMNS = ['id', 'org_id', 'name', 'url', 'status', 'created_at', 'updated_at', 'retention_days'] as const;
export type SiteRecord = {
  id: string;
  org_id: string;
  name: string;
  url: string;
  status: string;
  created_at: Date;
  updated_at: Date;
};

export async function listSites(db: Db, orgId: string, onlySiteIds?: readonly string[]): Promise<SiteRecord[]> {
  let q = db.selectFrom('sites').select(COLUMNS).where('org_id', '=', orgId).where('deleted_at', 'is', null);
  if (onlySiteIds)
    q = q.where('id', 'in', onlySiteIds.length ? [...onlySiteIds] : ['00000000-0000-0000-0000-000000000000']);
  return q.orderBy('created_at').orderBy('id').execute();
}

/** A live site, locked for the caller's transaction. */
export async function findSiteForUpdate(trx: Transaction<Database>, siteId: string): Promise<SiteRecord | undefined> {
  return trx
    .selectFrom('sites')
    .select(COLUMNS)
    .where('id', '=', siteId)
    .where('deleted_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
}

export async function findSite(db: Db, siteId: string): Promise<SiteRecord | undefined> {
  return db
    .selectFrom('sites')
    .select(COLUMNS)
    .where('id', '=', siteId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function updateSite(
  trx: Transaction<Database>,
  siteId: string,
  set: { name?: string; url?: string; status?: string },
  now: Date,
): Promise<SiteRecord> {
  return trx
    .updateTable('sites')
    .set({ ...set, updated_at: now })
    .where('id', '=', siteId)
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

/**
 * Soft-deletes a site: it disappears from every route, its keys are revoked and its webhooks disabled.
 * Returns the revoked keys' hashes so the caller can drop them from key caches.
 */
export async function deleteSite(trx: Transaction<Database>, siteId: string, now: Date): Promise<string[]> {
  await trx.updateTable('sites').set({ deleted_at: now, updated_at: now }).where('id', '=', siteId).execute();
  await trx
    .updateTable('webhook_endpoints')
    .set({ active: false, deleted_at: now, updated_at: now })
    .where('site_id', '=', siteId)
    .where('deleted_at', 'is', null)
    .execute();
  const keys = await trx
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('site_id', '=', siteId)
    .where('revoked_at', 'is', null)
    .returning('key_hash')
    .execute();
  return keys.map((k) => k.key_hash);
}
