import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Infra } from '../shared/infra.ts';
import { insertOrg, provisionSite } from '../shared/tenancy/provision.ts';

export interface Credentials {
  base_url: string;
  org_id: string;
  site_id: string;
  publishable_key: string;
  secret_key: string;
}

/**
 * On first start, creates a demo org and site with keys and writes them to `<data dir>/credentials.json`
 * (mode 0600). Later starts reuse the file, as long as its org still exists in the database.
 */
export async function ensureDemoCredentials(infra: Infra, baseUrl: string): Promise<{ creds: Credentials; created: boolean }> {
  const dir = infra.config.FRICTION_DATA_DIR;
  const file = join(dir, 'credentials.json');
  if (existsSync(file)) {
    const creds = JSON.parse(readFileSync(file, 'utf8')) as Credentials;
    const org = await infra.database.db.selectFrom('orgs').select('id').where('id', '=', creds.org_id).executeTakeFirst();
    if (org) {
      if (creds.base_url !== baseUrl) writeCredentials(file, { ...creds, base_url: baseUrl });
      return { creds: { ...creds, base_url: baseUrl }, created: false };
    }
  }
  const creds = await infra.database.db.transaction().execute(async (trx) => {
    const orgId = await insertOrg(trx, { name: 'Demo org', plan: 'pro' });
    const site = await provisionSite(trx, { orgId, name: 'Demo site', url: 'http://localhost:3000' });
    return { base_url: baseUrl, org_id: orgId, site_id: site.siteId, publishable_key: site.publishableKey, secret_key: site.secretKey };
  });
  mkdirSync(dir, { recursive: true });
  writeCredentials(file, creds);
  return { creds, created: true };
}

function writeCredentials(file: string, creds: Credentials): void {
  writeFileSync(file, `${JSON.stringify(creds, null, 2)}\n`, { mode: 0o600 });
}
