import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { findSdkConfigs } from '../db/queries/sdk-config.queries.ts';
import { DEFAULT_SDK_CONFIG, readSdkConfig, type SdkConfig } from './sdk-config.ts';
import { announceHint, listenForHints, type HintBus } from '../cache-hints.ts';
import { RefreshAheadCache } from '../refresh-ahead-cache.ts';

const MAX_SITES = 100_000;

/**
 * SDK configs of every environment of a site, cached per site so ingest's hot path (the config applied to every
 * batch and GET /v1/sdk-config) reads the database once per site and TTL, not per request. One read loads all of
 * a site's environments: an environment name the site never configured (batches carry free text) costs no read
 * and gets the defaults. `invalidateSite` drops a site at once: the API broadcasts every config change (see
 * `sdkConfigChangedSubject`), and the TTL bounds what a missed broadcast leaves behind.
 */
export class SdkConfigCache {
  private readonly db: Kysely<Database>;
  /** By site id: the configs of the site's environments, by environment name. */
  private readonly cache: RefreshAheadCache<Map<string, SdkConfig>>;

  constructor(db: Kysely<Database>, ttlMs: number) {
    this.db = db;
    this.cache = new RefreshAheadCache({ ttlMs, maxEntries: MAX_SITES });
  }

  async get(siteId: string, environment: string): Promise<SdkConfig> {
    const configs = await this.cache.get(siteId, async () => {
      const rows = await findSdkConfigs(this.db, siteId);
      return new Map(rows.map((r) => [r.environment, readSdkConfig(r.config)] as const));
    });
    return configs.get(environment) ?? DEFAULT_SDK_CONFIG;
  }

  invalidateSite(siteId: string): void {
    this.cache.invalidate(siteId);
  }
}

/** Subscribes `cache` to config changes (`{ site_id }`); returns the unsubscribe function. */
export function listenForSdkConfigChanges(bus: HintBus, subject: string, cache: SdkConfigCache): () => void {
  return listenForHints(bus, subject, ({ site_id }) => {
    if (typeof site_id === 'string') cache.invalidateSite(site_id);
  });
}

/** Tells every process that a site's SDK config changed (best effort: the cache TTL is the fallback). */
export async function announceSdkConfigChange(bus: HintBus, subject: string, siteId: string): Promise<void> {
  await announceHint(bus, subject, { site_id: siteId });
}
