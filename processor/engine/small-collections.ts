/**
 * A count map keyed by string that stays a flat array while small and becomes a Map when it grows. Most page hours
 * hold one to a few signal types, and in V8 an empty Map already costs about 190 bytes against about 30 for a small
 * array: at 100k pages that difference is tens of MiB. Lookups in the array form are linear, which at SMALL_LIMIT
 * entries is as fast as hashing.
 */

/** Entries at which a flat array becomes a Map (also the small-form bound of the engine's session indexes). */
export const SMALL_LIMIT = 16;

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
