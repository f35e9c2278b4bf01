/** Small helpers that keep engine output deterministic. */

/** Compares strings by UTF-16 code units (not locale): stable across machines and Node versions. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A plain record of a count map with keys in code-unit order, so equal maps give deep-equal records. */
export function sortedRecord(m: ReadonlyMap<string, number>): Record<string, number> {
  return Object.fromEntries([...m].sort(([a], [b]) => compareStrings(a, b)));
}
