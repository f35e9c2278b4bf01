import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../database.ts';

export interface KeyRecord {
  id: string;
  orgId: string;
  siteId: string | null;
  keyType: string;
  keyHash: string;
  scopes: string[];
  /** The key's site status (`active`, `paused`, `degraded`); null for org-level keys. Ingest refuses paused sites. */
  siteStatus: string | null;
}

/** The unrevoked key with this hash (of a site that still exists), or null. */
export async function findActiveKeyByHash(db: Kysely<Database>, keyHash: string): Promise<KeyRecord | null> {
  const row = await db
    .selectFrom('api_keys')
    .leftJoin('sites', 'sites.id', 'api_keys.site_id')
    .select([
      'api_keys.id',
      'api_keys.org_id',
      'api_keys.site_id',
      'api_keys.key_type',
      'api_keys.key_hash',
      'api_keys.scopes',
      'sites.status as site_status',
    ])
    .where('api_keys.key_hash', '=', keyHash)
    .where('api_keys.revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row) return null;
  return {
    id: row.id,
    orgId: row.org_id,
    siteId: row.site_id,
    keyType: row.key_type,
    keyHash: row.key_hash,
    scopes: row.scopes,
    siteStatus: row.site_status,
  };
}

/** Hashes of a site's unrevoked keys (to drop them from key caches when the site changes). */
export async function activeKeyHashesOfSite(db: Kysely<Database>, siteId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select('key_hash')
    .where('site_id', '=', siteId)
    .where('revoked_at', 'is', null)
    .execute();
  return rows.map((r) => r.key_hash);
}

/**
 * Revokes the unrevoked keys whose `by` column (`id`: one key, `site_id`: a site's) is `value`, in the caller's
 * transaction; returns their hashes so key caches can drop them (none for a key already revoked).
 */
export async function revokeApiKeys(
  trx: Transaction<Database>,
  by: 'id' | 'site_id',
  value: string,
  now: Date,
): Promise<string[]> {
  const rows = await trx
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where(by, '=', value)
    .where('revoked_at', 'is', null)
    .returning('key_hash')
    .execute();
  return rows.map((r) => r.key_hash);
}

export async function insertApiKey(
  db: Kysely<Database>,
  k: {
    id: string;
    orgId: string;
    siteId: string | null;
    keyType: string;
    keyPrefix: string;
    keyHash: string;
    scopes: string[];
    name?: string;
  },
): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({
      id: k.id,
      org_id: k.orgId,
      site_id: k.siteId,
      key_type: k.keyType,
      key_prefix: k.keyPrefix,
      key_hash: k.keyHash,
      scopes: k.scopes,
      name: k.name ?? null,
      revoked_at: null,
    })
    .execute();
}
