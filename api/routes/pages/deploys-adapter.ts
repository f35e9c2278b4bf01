import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { recentProductionDeploys } from '../deploys/deploys.queries.ts';

/**
 * How `/query/page` reads a site's recent deploys: a reader given as a dependency (tests and other installations
 * may supply their own); `deploysTableReader` reads the deploys table through the deploy module's query.
 */
export interface PageDeploy {
  id: string;
  version: string;
  environment: string;
  confusion_before: number | null;
  confusion_after: number | null;
  delta: number | null;
  recorded_at: string;
}

/** Deploys of the site recorded at or after `since`, newest first. */
export type RecentDeploysReader = (siteId: string, since: Date) => Promise<PageDeploy[]>;

/** The production deploys of the deploys table, in the page view's shape. */
export function deploysTableReader(db: Kysely<Database>): RecentDeploysReader {
  return async (siteId, since) =>
    (await recentProductionDeploys(db, siteId, since)).map((d) => ({
      id: d.id, version: d.version, environment: d.environment, confusion_before: d.confusion_before, confusion_after: d.confusion_after, delta: d.delta,
      recorded_at: new Date(d.recorded_at).toISOString(),
    }));
}

/** How far back `/query/page` lists deploys: the 30 days its score history covers. */
export const RECENT_DEPLOY_DAYS = 30;
