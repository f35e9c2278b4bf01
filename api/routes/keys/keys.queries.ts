import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { revokeApiKeys } from '../../../shared/db/queries/api-keys.queries.ts';

type Db = Kysely<Database> | Transaction<Database>;

export interface ApiKeyRow {
  id: string;
  org_id: string;
  site_id: string | null;
  key_type: string;
  name: string | null;
  key_prefix: string;
  scopes: string[];
  created_at: Date;
  revoked_at: Date | null;
}
/** Never `key_hash`. */
const COLUMNS = [
  'id',
  'org_id',
  'site_id',
  'key_type',
  'name',
  'key_prefix',
  'scopes',
  'created_at',
  'revoked_at',
] as const;

export async function listKeys(db: Db, siteId: string): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .select(COLUMNS)
    .where('site_id', '=', siteId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function findKey(db: Db, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').select(COLUMNS).where('id', '=', id).executeTakeFirst();
}

/** Revokes the key (once); returns its hash so caches can drop it, or null when it was already revoked. */
export async function revokeKey(trx: Transaction<Database>, id: string, now: Date): Promise<string | null> {
  return (await revokeApiKeys(trx, 'id', id, now))[0] ?? null;
}
