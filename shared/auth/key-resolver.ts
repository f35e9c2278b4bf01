import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { findActiveKeyByHash, type KeyRecord } from '../db/queries/api-keys.queries.ts';
import { hashApiKey, keyTypeOf, sameHash } from '../ids.ts';
import { announceHint, listenForHints, type HintBus } from '../cache-hints.ts';

/** Unknown keys are remembered briefly so a flood of bad keys cannot reach the database per request. */
const NEGATIVE_TTL_MS = 5_000;
const MAX_ENTRIES = 100_000;

/**
 * Resolves an API key to its record, caching lookups so the ingest hot path does not touch the database.
 * `invalidate` drops a key at once (revocation); `announceRevocation` tells every other process through the bus,
 * and the TTL bounds what a missed broadcast (bus down) can leave behind.
 */
export class KeyResolver {
  private readonly cache = new Map<string, { rec: KeyRecord | null; until: number }>();
  private readonly db: Kysely<Database>;
  private readonly ttlMs: number;
  private readonly inflight = new Map<string, Promise<KeyRecord | null>>();
  /** Bumped by every invalidation, so a read that started before a revocation does not cache the revoked key. */
  private generation = 0;

  constructor(db: Kysely<Database>, ttlMs: number) {
    this.db = db;
    this.ttlMs = ttlMs;
  }

  /**
   * The key's record when it exists, is unrevoked and its prefix matches its stored type; else null. In the last
   * fifth of a known key's TTL the cached record is still answered while one background read refreshes it
   * (refresh ahead): ingest's requests never wait for the database because an entry expired, where they would
   * queue behind the processor's transactions (on the embedded database, all statements share one connection).
   */
  async resolve(key: string): Promise<KeyRecord | null> {
    const type = keyTypeOf(key);
    if (!type || key.length > 200) return null;
    const hash = hashApiKey(key);
    const now = Date.now();
    const hit = this.cache.get(hash);
    if (hit && hit.until > now) {
      if (hit.rec && now >= hit.until - this.ttlMs / 5 && !this.inflight.has(hash))
        this.lookup(hash, type).catch(() => {});
      return hit.rec;
    }
    return this.lookup(hash, type);
  }

  /** One database read per key at a time; caches its answer unless an invalidation came while it ran. */
  private async lookup(hash: string, type: NonNullable<ReturnType<typeof keyTypeOf>>): Promise<KeyRecord | null> {
    const generation = this.generation;
    let pending = this.inflight.get(hash);
    if (!pending) {
      pending = findActiveKeyByHash(this.db, hash).finally(() => this.inflight.delete(hash));
      this.inflight.set(hash, pending);
    }
    const rec = await pending;
    const valid = rec && rec.keyType === type && sameHash(rec.keyHash, hash) ? rec : null;
    if (generation !== this.generation) return valid;
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    const now = Date.now();
    this.cache.set(hash, { rec: valid, until: now + (valid ? this.ttlMs : Math.min(this.ttlMs, NEGATIVE_TTL_MS)) });
    return valid;
  }

  invalidate(key: string): void {
    this.invalidateHash(hashApiKey(key));
  }

  invalidateHash(hash: string): void {
    this.generation++;
    this.cache.delete(hash);
    this.inflight.delete(hash);
  }
}

/** Subscribes `resolver` to revocations (`{ hashes }`): every process's resolver drops them at once. */
export function listenForRevocations(bus: HintBus, subject: string, resolver: KeyResolver): () => void {
  return listenForHints(bus, subject, ({ hashes }) => {
    if (Array.isArray(hashes)) for (const h of hashes) if (typeof h === 'string') resolver.invalidateHash(h);
  });
}

/** Announces revoked keys to every process (best effort: the cache TTL is the fallback). */
export async function announceRevocation(bus: HintBus, subject: string, hashes: readonly string[]): Promise<void> {
  if (hashes.length === 0) return;
  await announceHint(bus, subject, { hashes });
}
