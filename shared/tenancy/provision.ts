import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import { insertApiKey } from '../db/queries/api-keys.queries.ts';
import { hashApiKey, newApiKey, newId, type KeyType } from '../ids.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** Scopes of the keys issued with a new site. */
export const PUBLISHABLE_SCOPES = ['ingest:write'] as const;
export const DEFAULT_SECRET_SCOPES = ['query:read', 'manage:write'] as const;

/** Issues a key, storing only its hash; returns the plaintext (shown once). */
export async function issueApiKey(
  db: Db,
  k: { orgId: string; siteId: string | null; type: KeyType; scopes: readonly string[]; name?: string },
): Promise<{ id: string; key: string }> {
  const key = newApiKey(k.type);
  const id = newId();
  await insertApiKey(db, { id, orgId: k.orgId, siteId: k.siteId, keyType: k.type, keyPrefix: key.slice(0, 12), keyHash: hashApiKey(key), scopes: [...k.scopes], name: k.name });
  return { id, key };
}

export async function insertOrg(db: Db, o: { id?: string; name: string; plan?: string; trialEndsAt?: Date | null }): Promise<string> {
  const id = o.id ?? newId();
  await db.insertInto('orgs').values({ id, name: o.name, plan: o.plan ?? 'grow', trial_ends_at: o.trialEndsAt ?? null }).execute();
  return id;
}

/** Creates a site with its publishable key and a site-scoped secret key. Returns the plaintext keys once. */
export async function provisionSite(
  db: Db,
  s: { orgId: string; name: string; url: string },
): Promise<{ siteId: string; publishableKey: string; secretKey: string }> {
  const siteId = newId();
  await db.insertInto('sites').values({ id: siteId, org_id: s.orgId, name: s.name, url: s.url }).execute();
  const pub = await issueApiKey(db, { orgId: s.orgId, siteId, type: 'publishable', scopes: PUBLISHABLE_SCOPES, name: 'default publishable key' });
  const sec = await issueApiKey(db, { orgId: s.orgId, siteId, type: 'secret', scopes: DEFAULT_SECRET_SCOPES, name: 'default secret key' });
  return { siteId, publishableKey: pub.key, secretKey: sec.key };
}
