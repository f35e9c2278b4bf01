import { readSdkConfig, type SdkConfig } from '../../../shared/tenancy/sdk-config.ts';
import type { EnvironmentConfigRow } from './sdk-config.queries.ts';

/** One environment's SDK config, as the list of a site's environments and the answer to a change show it. */
export const presentEnvironmentConfig = (environment: string, config: SdkConfig, updatedAt: Date) => ({
  environment,
  config,
  updated_at: updatedAt.toISOString(),
});

/** `/v1/manage/sdk-config`: every environment of the site with its config. */
export const presentSdkConfigs = (siteId: string, rows: EnvironmentConfigRow[]) => ({
  site_id: siteId,
  environments: rows.map((r) => presentEnvironmentConfig(r.environment, readSdkConfig(r.config), r.updated_at)),
});
