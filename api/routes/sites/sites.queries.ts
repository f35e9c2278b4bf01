import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { revokeApiKeys } from '../../../shared/db/queries/api-keys.queries.ts';
import { liveSites } from '../../../shared/db/queries/sites.queries.ts';

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
  let q = liveSites(db).select(COLUMNS).where('org_id', '=', orgId);
  if (onlySiteIds)
    q = q.where('id', 'in', onlySiteIds.length ? [...onlySiteIds] : ['00000000-0000-0000-0000-000000000000']);
  return q.orderBy('created_at').orderBy('id').execute();
}

const liveSite = (db: Db, siteId: string) => liveSites(db).select(COLUMNS).where('id', '=', siteId);

/** A live site, locked for the caller's transaction. */
export async function findSiteForUpdate(trx: Transaction<Database>, siteId: string): Promise<SiteRecord | undefined> {
  return liveSite(trx, siteId).forUpdate().executeTakeFirst();
}

export async function findSite(db: Db, siteId: string): Promise<SiteRecord | undefined> {
  return liveSite(db, siteId).executeTakeFirst();
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
  return revokeApiKeys(trx, 'site_id', siteId, now);
}
