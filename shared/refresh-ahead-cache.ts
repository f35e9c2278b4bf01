/**
 * A read-through cache for the hot paths that must not wait for the database (ingest's key and SDK config lookups):
 * an answer is served from memory for a TTL, and in the last fifth of it one background read refreshes it (refresh
 * ahead), so requests never queue behind the processor's transactions because an entry expired. One read per key
 * at a time; `invalidate` drops a key at once, and a read that started before an invalidation is not remembered.
 */
export interface RefreshAheadOptions<V> {
  /** How long an answer is served from memory, in ms (0: nothing is remembered, every get reads). */
  ttlMs: number;
  /** Most keys remembered; a full cache starts over empty (rare, and cheaper than tracking what to evict). */
  maxEntries: number;
  /** Answers remembered only briefly and never refreshed ahead (a key not found): at most `ttlMs` of their own. */
  shortLived?: { ttlMs: number; is: (value: V) => boolean };
  /** The clock, epoch ms (tests). */
  now?: () => number;
}

interface Entry<V> {
  value: V;
  /** Epoch ms after which the entry is not served. */
  until: number;
  /** Epoch ms from which a hit also starts a background read (Infinity: never). */
  refreshFrom: number;
}

export class RefreshAheadCache<V> {
  private readonly o: RefreshAheadOptions<V>;
  private readonly now: () => number;
  private readonly entries = new Map<string, Entry<V>>();
  private readonly inflight = new Map<string, Promise<V>>();
  /** Bumped by every invalidation, so a read that started before one does not remember what it read. */
  private generation = 0;

  constructor(o: RefreshAheadOptions<V>) {
    this.o = o;
    this.now = o.now ?? Date.now;
  }

  /** The remembered answer for `key`, or what `read` answers (shared by every caller while it runs). */
  async get(key: string, read: () => Promise<V>): Promise<V> {
    const now = this.now();
    const hit = this.entries.get(key);
    if (hit && hit.until > now) {
      if (now >= hit.refreshFrom && !this.inflight.has(key)) this.read(key, read).catch(() => {});
      return hit.value;
    }
    return this.read(key, read);
  }

  /** Forgets `key` now, and any read of it still running. */
  invalidate(key: string): void {
    this.generation++;
    this.entries.delete(key);
    this.inflight.delete(key);
  }

  private read(key: string, read: () => Promise<V>): Promise<V> {
    let pending = this.inflight.get(key);
    if (!pending) {
      const generation = this.generation;
      const started: Promise<V> = read()
        .then((value) => {
          if (generation === this.generation) this.remember(key, value);
          return value;
        })
        .finally(() => {
          if (this.inflight.get(key) === started) this.inflight.delete(key);
        });
      this.inflight.set(key, started);
      pending = started;
    }
    return pending;
  }

  private remember(key: string, value: V): void {
    const short = this.o.shortLived?.is(value) ?? false;
    const ttlMs = short ? Math.min(this.o.ttlMs, this.o.shortLived!.ttlMs) : this.o.ttlMs;
    if (ttlMs <= 0) return;
    if (this.entries.size >= this.o.maxEntries) this.entries.clear();
    const now = this.now();
    this.entries.set(key, { value, until: now + ttlMs, refreshFrom: short ? Infinity : now + ttlMs - ttlMs / 5 });
  }
}
