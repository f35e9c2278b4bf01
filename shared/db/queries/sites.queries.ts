import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../database.ts';

type Db = Kysely<Database> | Transaction<Database>;

export async function insertSite(db: Db, s: { id: string; orgId: string; name: string; url: string }): Promise<void> {
  await db.insertInto('sites').values({ id: s.id, org_id: s.orgId, name: s.name, url: s.url }).execute();
}

/** Creates an environment with its SDK config; returns the environment id. */
export async function insertEnvironment(
  db: Db,
  e: { id: string; siteId: string; name: string; config: Record<string, unknown> },
): Promise<void> {
  await db.insertInto('environments').values({ id: e.id, site_id: e.siteId, name: e.name }).execute();
  await db
    .insertInto('sdk_configs')
    .values({ environment_id: e.id, site_id: e.siteId, config: JSON.stringify(e.config) })
    .execute();
}

/** The sites that are not deleted: a deleted site disappears from every route and takes no more traffic. */
export const liveSites = (db: Db) => db.selectFrom('sites').where('deleted_at', 'is', null);

/** Ids of the org's sites that are not deleted. */
export async function liveSiteIdsOfOrg(db: Db, orgId: string): Promise<string[]> {
  const rows = await liveSites(db).select('id').where('org_id', '=', orgId).execute();
  return rows.map((r) => r.id);
}
