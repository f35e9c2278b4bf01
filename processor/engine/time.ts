/**
 * Time arithmetic shared by the engine. Every function takes time as a parameter (epoch milliseconds, UTC);
 * nothing here reads a clock, so tests and recomputation see exactly what the processor saw.
 */

/** One hour in milliseconds. */
export const HOUR_MS = 3_600_000;
/** One day in milliseconds. */
export const DAY_MS = 86_400_000;

/** Hours in the current page window: scores describe "the last 24 h". */
export const PAGE_WINDOW_HOURS = 24;
/** Days in the issue-cluster window: issues count signals over the last 7 days (as the trend baseline does). */
export const CLUSTER_WINDOW_DAYS = 7;

/** Start (epoch ms) of the `size`-long bucket holding `ts`; buckets are aligned to the Unix epoch, so to UTC. */
export function bucketStart(ts: number, size: number): number {
  return Math.floor(ts / size) * size;
}

/**
 * First millisecond counted by the page window at `now`: the start of the hour bucket 23 hours before the one
 * holding `now`. The window is therefore the 24 whole hour buckets ending with the current one, so it moves in
 * hour steps and an incremental bucket store and a query over raw rows agree exactly.
 * NOTE: there is no upper bound. Events stamped ahead of `now` (ingest allows up to 1 h of client clock skew)
 * count at once instead of appearing later, which would look like a score changing with no traffic.
 */
export function pageWindowStart(now: number): number {
  return bucketStart(now, HOUR_MS) - (PAGE_WINDOW_HOURS - 1) * HOUR_MS;
}

/** First millisecond counted by the cluster window at `now`: the UTC day 6 days before today. No upper bound. */
export function clusterWindowStart(now: number): number {
  return bucketStart(now, DAY_MS) - (CLUSTER_WINDOW_DAYS - 1) * DAY_MS;
}

/** UTC calendar date `YYYY-MM-DD` of an epoch-ms instant (the key of `score_history`). */
export function utcDate(ts: number): string {
  return new Date(bucketStart(ts, DAY_MS)).toISOString().slice(0, 10);
}
