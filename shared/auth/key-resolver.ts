import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { findActiveKeyByHash, type KeyRecord } from '../db/queries/api-keys.queries.ts';
import { hashApiKey, keyTypeOf, sameHash } from '../ids.ts';
import { announceHint, listenForHints, type HintBus } from '../cache-hints.ts';
import { RefreshAheadCache } from '../refresh-ahead-cache.ts';

/** Unknown keys are remembered briefly so a flood of bad keys cannot reach the database per request. */
const NEGATIVE_TTL_MS = 5_000;
const MAX_ENTRIES = 100_000;

/**
 * Resolves an API key to its record, caching lookups so the ingest hot path does not touch the database.
 * `invalidate` drops a key at once (revocation); `announceRevocation` tells every other process through the bus,
 * and the TTL bounds what a missed broadcast (bus down) can leave behind.
 */
export class KeyResolver {
  private readonly db: Kysely<Database>;
  /** By key hash; unknown keys too (null), briefly. */
  private readonly cache: RefreshAheadCache<KeyRecord | null>;

  constructor(db: Kysely<Database>, ttlMs: number) {
    this.db = db;
    this.cache = new RefreshAheadCache({
      ttlMs,
      maxEntries: MAX_ENTRIES,
      shortLived: { ttlMs: NEGATIVE_TTL_MS, is: (rec) => rec === null },
    });
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
    return this.cache.get(hash, async () => {
      const rec = await findActiveKeyByHash(this.db, hash);
      return rec && rec.keyType === type && sameHash(rec.keyHash, hash) ? rec : null;
    });
  }

  invalidate(key: string): void {
    this.invalidateHash(hashApiKey(key));
  }

  invalidateHash(hash: string): void {
    this.cache.invalidate(hash);
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
