import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Infra } from '../shared/infra.ts';
import { InstanceKeys } from '../shared/auth/instance-keys.ts';
import { startSession } from '../shared/auth/sessions.ts';
import { hashPassword } from '../shared/auth/passwords.ts';
import { findUserByEmail } from '../shared/db/queries/accounts.queries.ts';
import { randomToken } from '../shared/ids.ts';
import { createMember } from '../shared/tenancy/accounts.ts';
import { insertOrg, provisionSite } from '../shared/tenancy/provision.ts';
import { DEMO_SHOP_PATH } from '../api/http/demo-shop.ts';

export interface Credentials {
  base_url: string;
  org_id: string;
  site_id: string;
  publishable_key: string;
  secret_key: string;
  /** The demo org's owner: log in with email and password, or use the token (renewed at every start). */
  owner: { email: string; password: string; token: string };
}

/**
 * On first start, creates a demo org with an owner user and a site with keys, and writes them to
 * `<data dir>/credentials.json` (mode 0600). Later starts reuse the file, as long as its org still exists in
 * the database, and renew the owner's token (tokens expire after JWT_TTL_SECONDS).
 */
export async function ensureDemoCredentials(
  infra: Infra,
  baseUrl: string,
): Promise<{ creds: Credentials; created: boolean }> {
  const dir = infra.config.FRICTION_DATA_DIR;
  const file = join(dir, 'credentials.json');
  const db = infra.database.db;
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as Omit<Credentials, 'owner'> & {
      owner?: Credentials['owner'];
    };
    const org = await db.selectFrom('orgs').select('id').where('id', '=', saved.org_id).executeTakeFirst();
    if (org) {
      // A file written before owners existed gets its owner now.
      const owner =
        saved.owner && (await findUserByEmail(db, saved.owner.email))
          ? saved.owner
          : await createOwner(infra, saved.org_id);
      const creds = {
        ...saved,
        base_url: baseUrl,
        owner: { ...owner, token: await ownerToken(infra, owner.email, saved.org_id) },
      };
      writeCredentials(file, creds);
      return { creds, created: false };
    }
  }
  const tenant = await db.transaction().execute(async (trx) => {
    const orgId = await insertOrg(trx, { name: 'Demo org', plan: 'pro' });
    // The api role's own demo shop: page screenshots work on it out of the box (api/http/demo-shop.ts).
    const site = await provisionSite(trx, {
      orgId,
      name: 'Demo site',
      url: `${baseUrl.replace(/\/+$/, '')}${DEMO_SHOP_PATH}`,
    });
    return {
      base_url: baseUrl,
      org_id: orgId,
      site_id: site.siteId,
      publishable_key: site.publishableKey,
      secret_key: site.secretKey,
    };
  });
  const owner = await createOwner(infra, tenant.org_id);
  const creds: Credentials = {
    ...tenant,
    owner: { ...owner, token: await ownerToken(infra, owner.email, tenant.org_id) },
  };
  mkdirSync(dir, { recursive: true });
  writeCredentials(file, creds);
  return { creds, created: true };
}

/** A new owner user of the org with a random password; the email is unique per demo org. */
async function createOwner(infra: Infra, orgId: string): Promise<{ email: string; password: string }> {
  const email = `owner+${orgId.slice(0, 8)}@demo.friction.example`;
  const password = randomToken(20);
  await createMember(infra.database.db, {
    orgId,
    email,
    passwordHash: await hashPassword(password, infra.config.PASSWORD_SCRYPT_N),
    role: 'owner',
  });
  return { email, password };
}

async function ownerToken(infra: Infra, email: string, orgId: string): Promise<string> {
  const user = await findUserByEmail(infra.database.db, email);
  const keys = new InstanceKeys(infra.database.db, infra.config);
  const policy = { tokenTtlSec: infra.config.JWT_TTL_SECONDS, sessionMaxSec: infra.config.SESSION_MAX_SECONDS };
  return (await startSession(infra.database.db, keys, { userId: user!.id, orgId }, policy, new Date())).token;
}

function writeCredentials(file: string, creds: Credentials): void {
  writeFileSync(file, `${JSON.stringify(creds, null, 2)}\n`, { mode: 0o600 });
}
