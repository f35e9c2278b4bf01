import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { findSdkConfigs } from '../db/queries/sdk-config.queries.ts';
import { DEFAULT_SDK_CONFIG, readSdkConfig, type SdkConfig } from './sdk-config.ts';
import { announceHint, listenForHints, type HintBus } from '../cache-hints.ts';

const MAX_SITES = 100_000;

/**
 * SDK configs of every environment of a site, cached per site so ingest's hot path (the config applied to every
 * batch and GET /v1/sdk-config) reads the database once per site and TTL, not per request. One read loads all of
 * a site's environments: an environment name the site never configured (batches carry free text) costs no read
 * and gets the defaults. `invalidateSite` drops a site at once: the API broadcasts every config change (see
 * `sdkConfigChangedSubject`), and the TTL bounds what a missed broadcast leaves behind.
 */
export class SdkConfigCache {
  private readonly cache = new Map<string, { configs: Map<string, SdkConfig>; until: number }>();
  private readonly inflight = new Map<string, Promise<Map<string, SdkConfig>>>();
  private readonly db: Kysely<Database>;
  private readonly ttlMs: number;
  /** Bumped by every invalidation, so a read that started before one does not cache what it read. */
  private generation = 0;

  constructor(db: Kysely<Database>, ttlMs: number) {
    this.db = db;
    this.ttlMs = ttlMs;
  }

  async get(siteId: string, environment: string): Promise<SdkConfig> {
    return (await this.site(siteId)).get(environment) ?? DEFAULT_SDK_CONFIG;
  }

  private async site(siteId: string): Promise<Map<string, SdkConfig>> {
    const hit = this.cache.get(siteId);
    const now = Date.now();
    if (hit && hit.until > now) {
      // Refresh ahead in the TTL's last fifth: ingest never waits for the database because an entry expired.
      if (now >= hit.until - this.ttlMs / 5 && !this.inflight.has(siteId)) this.load(siteId).catch(() => {});
      return hit.configs;
    }
    return this.load(siteId);
  }

  /** One database read per site at a time; cached unless an invalidation came while it ran. */
  private load(siteId: string): Promise<Map<string, SdkConfig>> {
    let pending = this.inflight.get(siteId);
    if (!pending) {
      const gen = this.generation;
      pending = findSdkConfigs(this.db, siteId)
        .then((rows) => {
          const configs = new Map(rows.map((r) => [r.environment, readSdkConfig(r.config)] as const));
          if (gen === this.generation && this.ttlMs > 0) {
            if (this.cache.size >= MAX_SITES) this.cache.clear();
            this.cache.set(siteId, { configs, until: Date.now() + this.ttlMs });
          }
          return configs;
        })
        .finally(() => this.inflight.delete(siteId));
      this.inflight.set(siteId, pending);
    }
    return pending;
  }

  invalidateSite(siteId: string): void {
    this.generation++;
    this.cache.delete(siteId);
    this.inflight.delete(siteId);
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
