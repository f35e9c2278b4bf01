import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { findActiveKeyByHash, type KeyRecord } from '../db/queries/api-keys.queries.ts';
import { hashApiKey, keyTypeOf, sameHash } from '../ids.ts';

/** Unknown keys are remembered briefly so a flood of bad keys cannot reach the database per request. */
const NEGATIVE_TTL_MS = 5_000;
const MAX_ENTRIES = 100_000;

/**
 * Resolves an API key to its record, caching lookups so the ingest hot path does not touch the database.
 * `invalidate` drops a key at once (revocation); other replicas drop it within the TTL.
 */
export class KeyResolver {
  private readonly cache = new Map<string, { rec: KeyRecord | null; until: number }>();
  private readonly db: Kysely<Database>;
  private readonly ttlMs: number;
  private readonly inflight = new Map<string, Promise<KeyRecord | null>>();

  constructor(db: Kysely<Database>, ttlMs: number) {
    this.db = db;
    this.ttlMs = ttlMs;
  }

  /** The key's record when it exists, is unrevoked and its prefix matches its stored type; else null. */
  async resolve(key: string): Promise<KeyRecord | null> {
    const type = keyTypeOf(key);
    if (!type || key.length > 200) return null;
    const hash = hashApiKey(key);
    const now = Date.now();
    const hit = this.cache.get(hash);
    if (hit && hit.until > now) return hit.rec;
    let pending = this.inflight.get(hash);
    if (!pending) {
      pending = findActiveKeyByHash(this.db, hash).finally(() => this.inflight.delete(hash));
      this.inflight.set(hash, pending);
    }
    const rec = await pending;
    const valid = rec && rec.keyType === type && sameHash(rec.keyHash, hash) ? rec : null;
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    this.cache.set(hash, { rec: valid, until: now + (valid ? this.ttlMs : Math.min(this.ttlMs, NEGATIVE_TTL_MS)) });
    return valid;
  }

  invalidate(key: string): void {
    this.cache.delete(hashApiKey(key));
  }

  invalidateHash(hash: string): void {
    this.cache.delete(hash);
  }
}
