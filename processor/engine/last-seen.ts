import { SMALL_LIMIT } from './small-collections.ts';

/**
 * Distinct ids (session ids) by the time of their latest appearance: the structure that makes a window's distinct
 * count cost O(1) per event instead of O(sessions in the window).
 *
 * A session is in a window [cutoff, ∞) exactly when its latest time is ≥ cutoff, so the distinct count of any window
 * is the number of ids whose latest time falls in a bucket at or after the cutoff. The index keeps, per bucket, how
 * many ids have their latest time in it: `countSince` sums those counters (one per bucket held: at most 25 hours for
 * a page, 170 for a cluster), whatever the number of sessions. `observe` moves one id between two counters.
 * Eviction (`removeBefore`) walks only the buckets that left, through the list of ids that moved into each bucket.
 *
 * Each id also carries a count `n` (signals of the session in a cluster: the evidence ranking), unless the index is
 * uncounted (`counts` false: a page's or an element's sessions, where only the latest time is read; n is then 0).
 *
 * Memory (8-byte references: Node's default build has no pointer compression): while it holds at most SMALL_LIMIT
 * ids the index is one flat array `[id, t, n, …]`, 24 bytes per id plus the id string, which the event already
 * allocated; a time beyond a Smi (epoch ms) adds a 16-byte heap number, so pages and elements index hour numbers.
 * Larger, it is a Map of {t, n} (a 40-byte object and a Map entry per id; uncounted, the time itself, a Smi for an
 * hour number: no object, and no second cache miss per lookup in a page of a million sessions) plus one 8-byte slot
 * per (id, bucket it moved into) in the bucket lists.
 */

/** Loop steps taken over stored state. Tests read it to prove a batch's work does not grow with the window. */
export const work = { steps: 0 };

/** An id's latest time and count. */
export interface Seen {
  t: number;
  n: number;
}

/** A large index's entry: {t, n}, or the time alone in an uncounted index. */
type Entry = Seen | number;

const timeOf = (e: Entry): number => (typeof e === 'number' ? e : e.t);

interface Large {
  map: Map<string, Entry>;
  buckets: Map<number, Bucket>;
  /** Upper bound on the buckets held: every id's bucket is at most `high` (the lower bound is the index's `low`). */
  high: number;
  /**
   * The number of ids whose bucket is at or after bucket `since` (NaN: none kept), kept current by `observe` and
   * `removeBefore`: a window's distinct count is asked of every batch that touches the index, at a cutoff that
   * moves once an hour, so the window's buckets are summed once per cutoff, not once per batch.
   */
  since: number;
  sinceCount: number;
}

interface Bucket {
  /** Ids whose latest time is in this bucket. */
  count: number;
  /** Ids that moved into this bucket (each once per move; may hold ids that moved on or were removed since). */
  ids: string[];
}

/** The reads the engine makes of a set of ids by latest time: an index, or a view derived from other state. */
export interface SeenReads {
  readonly isLarge: boolean;
  get(id: string): Seen | undefined;
  latest(id: string): number | undefined;
  countSince(cutoff: number, cap?: number): number;
  forEach(fn: (id: string, t: number, n: number) => void): void;
}

export class LastSeenIndex implements SeenReads {
  /** Bucket width in the unit of `t` (1 when `t` is already an hour number, HOUR_MS when `t` is epoch ms). */
  private readonly width: number;
  /** Small form: `[id, t, n, …]`; null once upgraded. */
  private small: (string | number)[] | null = [];
  /** Large form (null while small): kept apart, as most indexes (a page's sessions) stay small. */
  private large: Large | null = null;
  /**
   * While large: its number of ids and a lower bound on their buckets. Kept on the index itself, not in the Map or
   * `large`: the commonest read of a large index, a whole-window count of a cluster or an element, is then answered
   * from this one object; in a page of a million sessions each further object it touched was a cache miss.
   */
  private largeSize = 0;
  private low = Infinity;

  constructor(width: number) {
    this.width = width;
  }

  get size(): number {
    return this.small !== null ? this.small.length / 3 : this.largeSize;
  }

  /** Whether the index is in its Map form (more than SMALL_LIMIT ids). */
  get isLarge(): boolean {
    return this.small === null;
  }

  /** Whether ids carry counts (a class-level choice, so it costs no field on millions of instances). */
  protected get counts(): boolean {
    return true;
  }

  private bucketOf(t: number): number {
    return Math.floor(t / this.width);
  }

  /** The latest time and count of `id` (a copy), or undefined. */
  get(id: string): Seen | undefined {
    if (this.small === null) {
      const e = (this.large as Large).map.get(id);
      return e === undefined ? undefined : typeof e === 'number' ? { t: e, n: 0 } : { t: e.t, n: e.n };
    }
    const s = this.small;
    for (let i = 0; i < s.length; i += 3) {
      work.steps++;
      if (s[i] === id) return { t: s[i + 1] as number, n: s[i + 2] as number };
    }
    return undefined;
  }

  /** The latest time of `id`, or undefined: `get` without its copy, for the per-session reads of a batch. */
  latest(id: string): number | undefined {
    if (this.small === null) {
      const e = (this.large as Large).map.get(id);
      return e === undefined ? undefined : timeOf(e);
    }
    const s = this.small;
    for (let i = 0; i < s.length; i += 3) {
      work.steps++;
      if (s[i] === id) return s[i + 1] as number;
    }
    return undefined;
  }

  /** Records `n` more appearances of `id`, the latest at `t` (earlier than the one held: only the count grows). */
  observe(id: string, t: number, count: number): void {
    const n = this.counts ? count : 0;
    const s = this.small;
    if (s !== null) {
      for (let i = 0; i < s.length; i += 3) {
        work.steps++;
        if (s[i] === id) {
          if (t > (s[i + 1] as number)) s[i + 1] = t;
          s[i + 2] = (s[i + 2] as number) + n;
          return;
        }
      }
      s.push(id, t, n);
      // NOTE: push leaves V8's growth slack (at least 16 slots); a copy is exact, and most indexes hold 1-3 ids.
      if (s.length / 3 > SMALL_LIMIT) this.upgrade();
      else this.small = s.slice();
      return;
    }
    const large = this.large as Large;
    const e = large.map.get(id);
    if (e === undefined) {
      large.map.set(id, this.counts ? { t, n } : t);
      this.largeSize++;
      const to = this.bucketOf(t);
      if (to >= large.since) large.sinceCount++;
      this.enter(id, to);
      return;
    }
    const held = timeOf(e);
    if (typeof e !== 'number') e.n += n;
    if (t <= held) return;
    const from = this.bucketOf(held);
    const to = this.bucketOf(t);
    if (typeof e === 'number') large.map.set(id, t);
    else e.t = t;
    if (from === to) return;
    // Times only grow: the id enters the kept count when it crosses `since`.
    if (from < large.since && to >= large.since) large.sinceCount++;
    this.leave(from);
    this.enter(id, to);
  }

  /** Adds `dn` to the count of `id` (eviction subtracts the signals of the days that left). */
  addCount(id: string, dn: number): void {
    if (!this.counts) return;
    const s = this.small;
    if (s === null) {
      const e = (this.large as Large).map.get(id);
      if (e !== undefined) (e as Seen).n += dn;
      return;
    }
    for (let i = 0; i < s.length; i += 3) {
      work.steps++;
      if (s[i] === id) {
        s[i + 2] = (s[i + 2] as number) + dn;
        return;
      }
    }
  }

  /**
   * Number of ids whose latest time is ≥ `cutoff`, or `cap` if there are at least that many. O(buckets held) for a
   * bucket-aligned cutoff (every window is); a cutoff inside a bucket also scans that bucket's ids, stopping once
   * `cap` is reached.
   */
  countSince(cutoff: number, cap: number = Infinity): number {
    const s = this.small;
    if (s !== null) {
      let n = 0;
      for (let i = 1; i < s.length; i += 3) {
        work.steps++;
        if ((s[i] as number) >= cutoff) n++;
      }
      return Math.min(n, cap);
    }
    const first = this.bucketOf(cutoff);
    const aligned = first * this.width === cutoff;
    // Every id is at or after the cutoff (the whole window of a cluster or element, evicted daily): no bucket walk.
    if (aligned ? first <= this.low : first < this.low) return Math.min(this.largeSize, cap);
    const large = this.large as Large;
    const { map, buckets, high } = large;
    if (aligned && first === large.since) return Math.min(large.sinceCount, cap);
    let n = 0;
    // Sum the buckets after the cutoff, newest first, by direct lookup (a 24 h window is 25 lookups) or by walking
    // those held; with a cap, the walk stops once the cap is reached.
    const from = aligned ? first : first + 1;
    if (high - from < buckets.size) {
      for (let b = high; b >= from && n < cap; b--) {
        work.steps++;
        n += buckets.get(b)?.count ?? 0;
      }
    } else {
      buckets.forEach((bucket, b) => {
        work.steps++;
        if (b >= from) n += bucket.count;
      });
    }
    if (aligned && cap === Infinity) {
      // Kept from now on (the last aligned cutoff asked, which is the current window's).
      large.since = first;
      large.sinceCount = n;
    }
    const partial = aligned ? undefined : buckets.get(first);
    if (partial !== undefined && n < cap) {
      // The cutoff falls inside this bucket: only its ids at or after the cutoff count (each id once).
      const seen = new Set<string>();
      for (const id of partial.ids) {
        work.steps++;
        const e = map.get(id);
        if (e !== undefined && timeOf(e) >= cutoff && this.bucketOf(timeOf(e)) === first && !seen.has(id)) {
          seen.add(id);
          if (++n >= cap) break;
        }
      }
    }
    return Math.min(n, cap);
  }

  /** Removes the ids whose latest time is before `cutoff`. Walks only the buckets that end before it. */
  removeBefore(cutoff: number): void {
    const s = this.small;
    if (s !== null) {
      let w = 0;
      for (let i = 0; i < s.length; i += 3) {
        work.steps++;
        if ((s[i + 1] as number) >= cutoff) {
          s[w] = s[i] as string;
          s[w + 1] = s[i + 1] as number;
          s[w + 2] = s[i + 2] as number;
          w += 3;
        }
      }
      s.length = w;
      this.small = s.slice();
      return;
    }
    const map = (this.large as Large).map;
    const buckets = (this.large as Large).buckets;
    for (const [b, bucket] of buckets) {
      work.steps++;
      if ((b + 1) * this.width <= cutoff) {
        for (const id of bucket.ids) {
          work.steps++;
          const e = map.get(id);
          if (e !== undefined && this.bucketOf(timeOf(e)) === b) map.delete(id);
        }
        buckets.delete(b);
      } else if (b * this.width < cutoff) {
        for (const id of bucket.ids) {
          work.steps++;
          const e = map.get(id);
          if (e !== undefined && timeOf(e) < cutoff && this.bucketOf(timeOf(e)) === b) {
            map.delete(id);
            bucket.count--;
          }
        }
      }
    }
    // Every id left has its latest time at or after the cutoff.
    const large = this.large as Large;
    this.low = Math.max(this.low, this.bucketOf(cutoff));
    this.largeSize = map.size;
    // The ids removed were before the cutoff, so not in a kept count from a later bucket; an earlier one is dropped.
    if (!(Math.ceil(cutoff / this.width) <= large.since)) large.since = NaN;
    if (map.size <= SMALL_LIMIT / 2) this.downgrade();
  }

  /** Calls `fn` for every id. O(ids): for rebuilding derived state (evidence after an eviction), never per batch. */
  forEach(fn: (id: string, t: number, n: number) => void): void {
    const s = this.small;
    if (s !== null) {
      for (let i = 0; i < s.length; i += 3) {
        work.steps++;
        fn(s[i] as string, s[i + 1] as number, s[i + 2] as number);
      }
      return;
    }
    for (const [id, e] of (this.large as Large).map) {
      work.steps++;
      if (typeof e === 'number') fn(id, e, 0);
      else fn(id, e.t, e.n);
    }
  }

  private enter(id: string, b: number): void {
    const large = this.large as Large;
    if (b < this.low) this.low = b;
    if (b > large.high) large.high = b;
    const buckets = large.buckets;
    const bucket = buckets.get(b);
    if (bucket === undefined) buckets.set(b, { count: 1, ids: [id] });
    else {
      bucket.count++;
      bucket.ids.push(id);
    }
  }

  private leave(b: number): void {
    const bucket = (this.large as Large).buckets.get(b);
    if (bucket !== undefined) bucket.count--;
  }

  private upgrade(): void {
    const s = this.small as (string | number)[];
    this.small = null;
    const large: Large = { map: new Map(), buckets: new Map(), high: -Infinity, since: NaN, sinceCount: 0 };
    this.low = Infinity;
    this.large = large;
    for (let i = 0; i < s.length; i += 3) {
      const id = s[i] as string;
      const t = s[i + 1] as number;
      large.map.set(id, this.counts ? { t, n: s[i + 2] as number } : t);
      this.enter(id, this.bucketOf(t));
    }
    this.largeSize = large.map.size;
  }

  private downgrade(): void {
    const small: (string | number)[] = [];
    for (const [id, e] of (this.large as Large).map) small.push(id, timeOf(e), typeof e === 'number' ? 0 : e.n);
    this.small = small.slice();
    this.large = null;
    this.largeSize = 0;
    this.low = Infinity;
  }
}

/** An index that keeps no counts: a page's or an element's distinct sessions by hour number. */
export class LatestIndex extends LastSeenIndex {
  protected override get counts(): boolean {
    return false;
  }
}
