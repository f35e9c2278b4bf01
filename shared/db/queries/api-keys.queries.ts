import type { Kysely } from 'kysely';
import type { Database } from '../database.ts';

export interface KeyRecord {
  id: string;
  orgId: string;
  siteId: string | null;
  keyType: string;
  keyHash: string;
  scopes: string[];
}

/** The unrevoked key with this hash (of a site that still exists), or null. */
export async function findActiveKeyByHash(db: Kysely<Database>, keyHash: string): Promise<KeyRecord | null> {
  const row = await db
    .selectFrom('api_keys')
    .select(['id', 'org_id', 'site_id', 'key_type', 'key_hash', 'scopes'])
    .where('key_hash', '=', keyHash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row) return null;
  return { id: row.id, orgId: row.org_id, siteId: row.site_id, keyType: row.key_type, keyHash: row.key_hash, scopes: row.scopes };
}

export async function insertApiKey(
  db: Kysely<Database>,
  k: { id: string; orgId: string; siteId: string | null; keyType: string; keyPrefix: string; keyHash: string; scopes: string[]; name?: string },
): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({ id: k.id, org_id: k.orgId, site_id: k.siteId, key_type: k.keyType, key_prefix: k.keyPrefix, key_hash: k.keyHash, scopes: k.scopes, name: k.name ?? null, revoked_at: null })
    .execute();
}
