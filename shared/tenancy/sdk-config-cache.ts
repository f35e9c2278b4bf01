import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { findSdkConfig } from '../db/queries/sdk-config.queries.ts';
import { DEFAULT_SDK_CONFIG, readSdkConfig, type SdkConfig } from './sdk-config.ts';

const MAX_ENTRIES = 100_000;

/**
 * SDK configs by (site, environment), cached so ingest's hot path (the ignore-selector check on every batch and
 * GET /v1/sdk-config) reads the database once per TTL, not per request. `invalidateSite` drops a site at once:
 * the API broadcasts every config change (see `sdkConfigChangedSubject`), and the TTL bounds what a missed
 * broadcast leaves behind. An environment that does not exist gets the defaults.
 */
export class SdkConfigCache {
  private readonly cache = new Map<string, { config: SdkConfig; until: number }>();
  private readonly inflight = new Map<string, Promise<SdkConfig>>();
  private readonly db: Kysely<Database>;
  private readonly ttlMs: number;
  /** Bumped by every invalidation, so a lookup that started before one does not cache what it read. */
  private generation = 0;

  constructor(db: Kysely<Database>, ttlMs: number) {
    this.db = db;
    this.ttlMs = ttlMs;
  }

  async get(siteId: string, environment: string): Promise<SdkConfig> {
    const k = `${siteId} ${environment}`;
    const hit = this.cache.get(k);
    if (hit && hit.until > Date.now()) return hit.config;
    let pending = this.inflight.get(k);
    if (!pending) {
      const gen = this.generation;
      pending = findSdkConfig(this.db, siteId, environment)
        .then((stored) => {
          const config = stored === undefined ? DEFAULT_SDK_CONFIG : readSdkConfig(stored);
          if (gen === this.generation && this.ttlMs > 0) {
            if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
            this.cache.set(k, { config, until: Date.now() + this.ttlMs });
          }
          return config;
        })
        .finally(() => this.inflight.delete(k));
      this.inflight.set(k, pending);
    }
    return pending;
  }

  invalidateSite(siteId: string): void {
    this.generation++;
    for (const k of this.cache.keys()) if (k.startsWith(`${siteId} `)) this.cache.delete(k);
    for (const k of this.inflight.keys()) if (k.startsWith(`${siteId} `)) this.inflight.delete(k);
  }
}

/** The broadcast of changed SDK configs: `{ site_id }`. */
export interface ConfigBus {
  broadcast(subject: string, data: Uint8Array): Promise<void>;
  listen(subject: string, handler: (data: Uint8Array) => void): () => void;
}

/** Subscribes `cache` to config changes; returns the unsubscribe function. */
export function listenForSdkConfigChanges(bus: ConfigBus, subject: string, cache: SdkConfigCache): () => void {
  return bus.listen(subject, (data) => {
    try {
      const { site_id } = JSON.parse(new TextDecoder().decode(data)) as { site_id?: unknown };
      if (typeof site_id === 'string') cache.invalidateSite(site_id);
    } catch {
      /* a malformed hint changes nothing; the TTL still applies */
    }
  });
}

/** Tells every process that a site's SDK config changed (best effort: the cache TTL is the fallback). */
export async function announceSdkConfigChange(bus: ConfigBus, subject: string, siteId: string): Promise<void> {
  await bus.broadcast(subject, new TextEncoder().encode(JSON.stringify({ site_id: siteId }))).catch(() => {});
}
