/**
 * How `/query/page` reads a site's recent deploys. The page view takes this reader as a dependency so the deploy
 * module supplies its own query; `noDeploysRecorded` is the reader for an installation without a deploys table, and
 * answers what is true there: no deploy has been recorded.
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

export const noDeploysRecorded: RecentDeploysReader = async () => [];

/** How far back `/query/page` lists deploys: the 30 days its score history covers. */
export const RECENT_DEPLOY_DAYS = 30;
