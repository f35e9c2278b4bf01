/**
 * Incremental issue-cluster state: signals grouped by (site, page, canonical selector, signal type), in UTC-day
 * buckets over the last 7 days (time.ts `clusterWindowStart`). Each day keeps its signal count, first and last
 * signal, the latest label and raw selector, and per session its signal count (for eviction). Each cluster also
 * keeps its sessions indexed by the time of their latest signal (last-seen.ts) with their signal counts, and the
 * top EVIDENCE_SESSIONS of them. Each element (site, page, canonical selector) keeps its distinct sessions across
 * signal types the same way. That answers every issue and element field exactly (counts, distinct sessions,
 * evidence, first/last signal) for any `now`, whatever the order or batching of events.
 *
 * Cost: folding a batch costs O(its events); summarizing a touched cluster costs O(days + hour buckets held +
 * the batch's sessions of it), whatever the cluster's sessions. One exception, documented where it happens: a read
 * at a `now` for which the cluster still holds a day outside the window (between midnight UTC and the next tick's
 * eviction) ranks evidence by a scan of the cluster's sessions.
 *
 * Staging as in windows.ts: `foldSignals` (cluster-fold.ts) condenses a batch into patches without reading or
 * changing the state; `ClusterReader` (cluster-reader.ts) reads the committed state with the patches laid over it;
 * `commitClusterUpdate` (cluster-commit.ts) applies them in place after the commit. Events must already be
 * deduplicated by the store.
 *
 * The modules, by concern: cluster-model.ts (the state's shape and lookups), cluster-days.ts (a day as one flat
 * array, and merging a batch's day into it), cluster-sessions.ts (a cluster's or element's sessions, derived from
 * the days or indexed), cluster-evidence.ts (ranking evidence sessions), cluster-totals.ts (day-level totals of a
 * window), cluster-fold.ts, cluster-commit.ts (commit and eviction) and cluster-reader.ts (summaries). This module
 * is their public API.
 *
 * Memory (Node's default build: 8-byte references): a cluster of two sessions on one day holds 200 bytes of
 * structure besides its strings: the cluster, which is its own key, 48 (its element holds site, page and selector;
 * one field holds its days, or its index, which then holds the days and the evidence top); its day, one flat array
 * held without a list while it is the only one, 152 (7 fields, the day a day number, not boxed epoch ms, then 24
 * bytes a session while it has at most SMALL_LIMIT); a further day adds its array and an exact-size list of days.
 * No session index while the days hold at most SMALL_LIMIT (session, day) entries (reads derive the sessions from
 * the days, one step per entry); past that the index adds a Map entry, a {t, n} record and bucket slots per session
 * (last-seen.ts). An element derives its sessions from its clusters' days likewise, and past SMALL_LIMIT entries
 * holds them once more, by hour number. A page's elements are an array while at most SMALL_LIMIT. Strings are
 * shared where a message's copy would be kept per object: catalogued signal types (events.ts `sharedSignalType`),
 * the site id and page of a page's elements, a canonical raw selector. docs/benchmarks.md, "Processor memory", has the measured totals.
 */

export { applySignals, commitClusterUpdate, evictClusters } from './cluster-commit.ts';
export { topEvidence, type EvidenceSession, type SessionDay } from './cluster-evidence.ts';
export { clusterKeyOf, foldSignals, type ClusterUpdate } from './cluster-fold.ts';
export {
  clusterKeyString,
  createClusterState,
  getCluster,
  isLater,
  siteClusters,
  siteElements,
  type ClusterKey,
  type ClusterState,
  type Latest,
} from './cluster-model.ts';
export {
  ClusterReader,
  sessionsActiveSince,
  summarizeCluster,
  type ClusterSummary,
  type ElementParts,
} from './cluster-reader.ts';
