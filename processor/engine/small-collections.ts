/**
 * Sets and maps keyed by string that stay plain arrays while small and become a Set/Map when they grow.
 * Most page-hours and cluster-days hold one to a few sessions, and in V8 an empty Map or Set already costs about
 * 190 bytes against about 30 for a small array. At 1M clusters and 100k pages that difference is hundreds of MiB.
 * Lookups in the array form are linear, which at SMALL_LIMIT entries is as fast as hashing.
 *
 * The "owned" helpers mutate and may return a different container (after an upgrade), so callers keep the return
 * value. Only containers the caller has just copied (copy-on-write) may be passed to them.
 */

/** Entries at which an array becomes a Set or Map. */
export const SMALL_LIMIT = 16;

/** A read-only set of strings. */
export type SmallSet = readonly string[] | ReadonlySet<string>;
/** A set of strings the caller owns and may mutate through `addOwned`. */
export type OwnedSet = string[] | Set<string>;
/** A read-only map from strings; iterates as [key, value] entries in both forms. */
export type SmallMap<V> = readonly (readonly [string, V])[] | ReadonlyMap<string, V>;
/** A map the caller owns and may mutate through `setOwned`. */
export type OwnedMap<V> = [string, V][] | Map<string, V>;

/** Number of elements. */
export function sizeOf(c: SmallSet | SmallMap<unknown>): number {
  return Array.isArray(c) ? c.length : (c as ReadonlySet<string>).size;
}

/** A mutable copy of a set (or a new empty one). */
export function copySet(s: SmallSet | undefined): OwnedSet {
  if (s === undefined) return [];
  return Array.isArray(s) ? [...s] : new Set(s as ReadonlySet<string>);
}

/** Adds `x` to an owned set; returns the set to keep (a Set once it outgrows SMALL_LIMIT). */
export function addOwned(s: OwnedSet, x: string): OwnedSet {
  if (!Array.isArray(s)) return s.add(x);
  if (s.includes(x)) return s;
  s.push(x);
  return s.length > SMALL_LIMIT ? new Set(s) : s;
}

/**
 * Trims an owned collection before it is published. NOTE: V8 grows an array by at least 16 slots on push, so a
 * one-session array would keep ~150 bytes of slack; slice() copies it to its exact length.
 */
export function compact<C extends unknown[] | ReadonlySet<unknown> | ReadonlyMap<unknown, unknown>>(c: C): C {
  if (!Array.isArray(c)) return c;
  // Most page-hours have no signal: they all share one frozen empty array instead of 32 bytes each.
  return (c.length === 0 ? EMPTY : c.slice()) as C;
}

/** The shared empty collection. Frozen: the owned helpers only ever mutate fresh copies. */
const EMPTY: readonly never[] = Object.freeze([]);

/** A mutable copy of a map (or a new empty one). Values are shared, so they must be immutable. */
export function copyMap<V>(m: SmallMap<V> | undefined): OwnedMap<V> {
  if (m === undefined) return [];
  return Array.isArray(m) ? m.map(([k, v]) => [k, v] as [string, V]) : new Map(m as ReadonlyMap<string, V>);
}

/** The value for `k`, or undefined. */
export function getIn<V>(m: SmallMap<V>, k: string): V | undefined {
  if (!Array.isArray(m)) return (m as ReadonlyMap<string, V>).get(k);
  for (const [key, v] of m as readonly (readonly [string, V])[]) if (key === k) return v;
  return undefined;
}

/** Sets `k` in an owned map; returns the map to keep (a Map once it outgrows SMALL_LIMIT). */
export function setOwned<V>(m: OwnedMap<V>, k: string, v: V): OwnedMap<V> {
  if (!Array.isArray(m)) return m.set(k, v);
  for (const entry of m) {
    if (entry[0] === k) {
      entry[1] = v;
      return m;
    }
  }
  m.push([k, v]);
  return m.length > SMALL_LIMIT ? new Map(m) : m;
}

/**
 * A map from string to a pair of numbers, kept flat in one array while small: `[k0, a0, b0, k1, a1, b1, …]`.
 * One session of one cluster-day then costs one array instead of an array, a tuple and an object (~72 against ~160
 * bytes), which matters at a million clusters. Past SMALL_LIMIT keys it becomes a Map of [a, b] tuples.
 */
export type PairMap = readonly (string | number)[] | ReadonlyMap<string, readonly [number, number]>;
/** A PairMap the caller owns and may mutate through `updatePair`. */
export type OwnedPairMap = (string | number)[] | Map<string, [number, number]>;

/** Number of keys. */
export function pairCount(m: PairMap): number {
  return Array.isArray(m) ? m.length / 3 : (m as ReadonlyMap<string, unknown>).size;
}

/** A mutable copy (or a new empty map). */
export function copyPairMap(m: PairMap | undefined): OwnedPairMap {
  if (m === undefined) return [];
  if (Array.isArray(m)) return [...m];
  return new Map([...(m as ReadonlyMap<string, readonly [number, number]>)].map(([k, [a, b]]) => [k, [a, b]]));
}

/** Calls `fn` for every key with its pair. */
export function forEachPair(m: PairMap, fn: (key: string, a: number, b: number) => void): void {
  if (Array.isArray(m)) {
    for (let i = 0; i < m.length; i += 3) fn(m[i] as string, m[i + 1] as number, m[i + 2] as number);
  } else {
    for (const [k, [a, b]] of m as ReadonlyMap<string, readonly [number, number]>) fn(k, a, b);
  }
}

/**
 * Sets the pair of `key` in an owned map to `next(previous)` (previous undefined when absent); returns the map to
 * keep (a Map once it outgrows SMALL_LIMIT keys).
 */
export function updatePair(m: OwnedPairMap, key: string, next: (prev: readonly [number, number] | undefined) => readonly [number, number]): OwnedPairMap {
  if (!Array.isArray(m)) {
    const [a, b] = next(m.get(key));
    return m.set(key, [a, b]);
  }
  for (let i = 0; i < m.length; i += 3) {
    if (m[i] === key) {
      const [a, b] = next([m[i + 1] as number, m[i + 2] as number]);
      m[i + 1] = a;
      m[i + 2] = b;
      return m;
    }
  }
  const [a, b] = next(undefined);
  m.push(key, a, b);
  if (m.length / 3 <= SMALL_LIMIT) return m;
  const map = new Map<string, [number, number]>();
  forEachPair(m, (k, x, y) => map.set(k, [x, y]));
  return map;
}

/**
 * A count per string key, kept flat while small: `[k0, n0, k1, n1, …]` (one array where entries as [k, n] tuples
 * cost an array each: about 24 bytes a key against 72). Past SMALL_LIMIT keys it becomes a Map.
 */
export type CountMap = readonly (string | number)[] | ReadonlyMap<string, number>;

/**
 * Adds `n` to the count of `key`; returns the map to keep. An array is copied to its exact length (never changed
 * in place: it may be the shared empty one); a Map is changed in place.
 */
export function addToCount(m: CountMap, key: string, n: number): CountMap {
  if (!Array.isArray(m)) return (m as Map<string, number>).set(key, ((m as Map<string, number>).get(key) ?? 0) + n);
  const flat = m as readonly (string | number)[];
  for (let i = 0; i < flat.length; i += 2) {
    if (flat[i] === key) {
      const next = flat.slice();
      next[i + 1] = (flat[i + 1] as number) + n;
      return next;
    }
  }
  if (flat.length / 2 < SMALL_LIMIT) return [...flat, key, n];
  const map = new Map<string, number>();
  forEachCount(flat, (k, c) => map.set(k, c));
  return map.set(key, n);
}

/** Calls `fn` for every key with its count. */
export function forEachCount(m: CountMap, fn: (key: string, n: number) => void): void {
  if (Array.isArray(m)) {
    const flat = m as readonly (string | number)[];
    for (let i = 0; i < flat.length; i += 2) fn(flat[i] as string, flat[i + 1] as number);
  } else (m as ReadonlyMap<string, number>).forEach((n, k) => fn(k, n));
}
