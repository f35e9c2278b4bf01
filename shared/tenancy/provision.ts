import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import { insertApiKey } from '../db/queries/api-keys.queries.ts';
import { insertEnvironment, insertSite } from '../db/queries/sites.queries.ts';
import { hashApiKey, newApiKey, newId, type KeyType } from '../ids.ts';
import { DEFAULT_ENVIRONMENT, DEFAULT_SDK_CONFIG } from './sdk-config.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** Scopes of the keys issued with a new site. */
export const PUBLISHABLE_SCOPES = ['ingest:write'] as const;
export const DEFAULT_SECRET_SCOPES = ['query:read', 'manage:write'] as const;

/** Issues a key, storing only its hash; returns the plaintext (shown once). */
export async function issueApiKey(
  db: Db,
  k: { orgId: string; siteId: string | null; type: KeyType; scopes: readonly string[]; name?: string },
): Promise<{ id: string; key: string; prefix: string }> {
  const key = newApiKey(k.type);
  const id = newId();
  const prefix = key.slice(0, 12);
  await insertApiKey(db, {
    id,
    orgId: k.orgId,
    siteId: k.siteId,
    keyType: k.type,
    keyPrefix: prefix,
    keyHash: hashApiKey(key),
    scopes: [...k.scopes],
    name: k.name,
  });
  return { id, key, prefix };
}

export async function insertOrg(
  db: Db,
  o: {
    id?: string;
    name: string;
    plan?: string;
    trialEndsAt?: Date | null;
    siteLimit?: number | null;
    sessionLimit?: number | null;
  },
): Promise<string> {
  const id = o.id ?? newId();
  await db
    .insertInto('orgs')
    .values({
      id,
      name: o.name,
      plan: o.plan ?? 'grow',
      trial_ends_at: o.trialEndsAt ?? null,
      site_limit: o.siteLimit ?? null,
      session_limit: o.sessionLimit ?? null,
    })
    .execute();
  return id;
}

/**
 * Creates a site as the spec describes: its production environment with a default SDK config, its
 * publishable key and a site-scoped secret key. Returns the plaintext keys once. Plan limits are the
 * caller's concern (the API checks them under the org's row lock).
 */
export async function provisionSite(
  db: Db,
  s: { orgId: string; name: string; url: string },
): Promise<{ siteId: string; publishableKey: string; secretKey: string }> {
  const siteId = newId();
  await insertSite(db, { id: siteId, orgId: s.orgId, name: s.name, url: s.url });
  await insertEnvironment(db, { id: newId(), siteId, name: DEFAULT_ENVIRONMENT, config: DEFAULT_SDK_CONFIG });
  const pub = await issueApiKey(db, {
    orgId: s.orgId,
    siteId,
    type: 'publishable',
    scopes: PUBLISHABLE_SCOPES,
    name: 'default publishable key',
  });
  const sec = await issueApiKey(db, {
    orgId: s.orgId,
    siteId,
    type: 'secret',
    scopes: DEFAULT_SECRET_SCOPES,
    name: 'default secret key',
  });
  return { siteId, publishableKey: pub.key, secretKey: sec.key };
}
