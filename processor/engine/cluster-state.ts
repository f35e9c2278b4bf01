import { isSignalEvent, type EngineEvent } from './events.ts';
import { canonicalSelector } from './selectors.ts';
import { compact, copyPairMap, forEachPair, updatePair, type OwnedPairMap, type PairMap } from './small-collections.ts';
import { DAY_MS, bucketStart, clusterWindowStart, pageWindowStart } from './time.ts';
import { compareStrings } from './util.ts';

/**
 * Incremental issue-cluster state: signals grouped by (site, page, canonical selector, signal type), in UTC-day
 * buckets over the last 7 days (time.ts `clusterWindowStart`). Each day keeps, per session, its signal count and
 * last signal time, plus the latest label and raw selector seen. That is enough to answer every issue field exactly
 * (counts, distinct sessions, evidence, first/last signal) for any `now`, whatever the order or batching of events.
 *
 * Copy-on-write like windows.ts: `foldSignals` returns new versions of the touched clusters, `commitClusterUpdate`
 * makes them current. Events must already be deduplicated by the store.
 */

/** What an issue is keyed by. `selector` is canonical ('' for page-level signals with no element). */
export interface ClusterKey {
  readonly siteId: string;
  readonly page: string;
  readonly selector: string;
  readonly signalType: string;
}

/**
 * The most recent value of a field and its time. "Most recent" is decided by (ts, value): at equal times the larger
 * string wins, so the answer never depends on arrival order (and no event id has to be kept in memory).
 */
export interface Latest {
  /** Epoch ms. */
  readonly ts: number;
  readonly value: string;
}

/** One session's share of a cluster over a window (views and summaries; times absolute). */
export interface SessionDay {
  readonly count: number;
  /** Epoch ms of its latest signal. */
  readonly lastTs: number;
}

/**
 * One UTC day of one cluster. Never mutated once committed. Flat, and with times stored as offsets from `start`
 * (0..86 399 999, small integers V8 keeps unboxed) rather than epoch ms (boxed doubles, 16 bytes each): there can be
 * a million of these.
 */
export interface ClusterDay {
  /** Day start, epoch ms (00:00 UTC). */
  readonly start: number;
  readonly count: number;
  /** Earliest and latest signal, ms after `start`. */
  readonly firstAt: number;
  readonly lastAt: number;
  /** Per session id: its signal count this day and its latest signal, ms after `start`. */
  readonly sessions: PairMap;
  /** Latest non-empty label of the day, or null; `labelAt` is its time, ms after `start` (-1 when null). */
  readonly label: string | null;
  readonly labelAt: number;
  /** Latest raw selector of the day ('' when the signals had none); `selectorAt` is its time, ms after `start`. */
  readonly selector: string;
  readonly selectorAt: number;
}

/** One cluster: its key and its day buckets (at most one per start, order not significant). Replaced, never mutated, once committed. */
export interface Cluster {
  readonly key: ClusterKey;
  readonly days: readonly ClusterDay[];
}

/** Clusters by site, then page, then `${selector}\u0000${signalType}`. */
export interface ClusterState {
  readonly sites: Map<string, Map<string, Map<string, Cluster>>>;
}

/** New versions of the clusters a batch touched; commit it to make them current, drop it to roll back. */
export interface ClusterUpdate {
  readonly clusters: readonly Cluster[];
}

/** One session's share of a cluster over the window: the evidence rows of an issue. */
export interface EvidenceSession {
  readonly sessionId: string;
  /** Signals of this cluster from the session in the window. */
  readonly signals: number;
  /** Epoch ms of the session's latest signal in the cluster. */
  readonly lastSignalAt: number;
}

/** A cluster at `now`: everything an issue record shows. */
export interface ClusterSummary {
  readonly key: ClusterKey;
  /** Latest raw selector (what the SDK sent, usable for the element heatmap); '' when none. */
  readonly selector: string;
  /** Latest non-empty element label, or null. */
  readonly label: string | null;
  /** Signals in the cluster window. */
  readonly signalCount: number;
  /** Distinct sessions with a signal in the cluster window. */
  readonly affectedSessions: number;
  /** Distinct sessions whose latest signal falls in the page window (24 h): the numerator of an issue's share. */
  readonly windowAffectedSessions: number;
  /** Epoch ms. */
  readonly firstSignalAt: number;
  /** Epoch ms. */
  readonly lastSignalAt: number;
  /** Top sessions by signals, then latest signal, then id; at most the limit asked for. */
  readonly evidence: readonly EvidenceSession[];
}

/** Evidence sessions kept on an issue: enough to replay a pattern, few enough to read. */
export const EVIDENCE_SESSIONS = 10;

/** An empty state. */
export function createClusterState(): ClusterState {
  return { sites: new Map() };
}

/** The cluster key of a signal event. */
export function clusterKeyOf(e: EngineEvent & { readonly signal: string }): ClusterKey {
  return { siteId: e.siteId, page: e.page, selector: canonicalSelector(e.selector), signalType: e.signal };
}

/** A string form of a key, unique per key (NUL cannot occur in the parts). */
export function clusterKeyString(k: ClusterKey): string {
  return `${k.siteId}\u0000${k.page}\u0000${k.selector}\u0000${k.signalType}`;
}

/** Whether `a` is more recent than `b` by (ts, value); anything is more recent than null. */
export function isLater(a: Latest, b: Latest | null): boolean {
  return b === null || a.ts > b.ts || (a.ts === b.ts && a.value > b.value);
}

/** The committed cluster for a key, or undefined. */
export function getCluster(state: ClusterState, key: ClusterKey): Cluster | undefined {
  return state.sites.get(key.siteId)?.get(key.page)?.get(`${key.selector}\u0000${key.signalType}`);
}

/** The committed clusters of one page (any selector, any type). */
export function pageClusters(state: ClusterState, siteId: string, page: string): Cluster[] {
  return [...(state.sites.get(siteId)?.get(page)?.values() ?? [])];
}

/** All committed clusters of a site. */
export function siteClusters(state: ClusterState, siteId: string): Cluster[] {
  const out: Cluster[] = [];
  for (const byKey of state.sites.get(siteId)?.values() ?? []) out.push(...byKey.values());
  return out;
}

interface DraftDay {
  start: number;
  count: number;
  firstAt: number;
  lastAt: number;
  sessions: OwnedPairMap;
  label: string | null;
  labelAt: number;
  selector: string;
  selectorAt: number;
}

/** The published form of a draft day: an exact literal (no spread), so V8 allocates no spare fields. */
function publishDay(d: DraftDay): ClusterDay {
  return {
    start: d.start,
    count: d.count,
    firstAt: d.firstAt,
    lastAt: d.lastAt,
    sessions: compact(d.sessions),
    label: d.label,
    labelAt: d.labelAt,
    selector: d.selector,
    selectorAt: d.selectorAt,
  };
}

/** Folds new signal events into copies of the clusters they touch; `state` is not changed. Other events are skipped. */
export function foldSignals(state: ClusterState, events: readonly EngineEvent[]): ClusterUpdate {
  const drafts = new Map<string, { key: ClusterKey; kept: ClusterDay[]; owned: Map<number, DraftDay> }>();
  for (const e of events) {
    if (!isSignalEvent(e)) continue;
    const key = clusterKeyOf(e);
    const ks = clusterKeyString(key);
    let draft = drafts.get(ks);
    if (draft === undefined) {
      draft = { key, kept: [...(getCluster(state, key)?.days ?? [])], owned: new Map() };
      drafts.set(ks, draft);
    }
    const start = bucketStart(e.ts, DAY_MS);
    // NOTE: `| 0` makes the offset an int32, which V8 stores unboxed; a double result would be a 16-byte heap number.
    const at = (e.ts - start) | 0;
    let d = draft.owned.get(start);
    if (d === undefined) {
      // Copy on first touch: the committed day may still be read until the commit.
      const i = draft.kept.findIndex((k) => k.start === start);
      const c = i < 0 ? undefined : draft.kept.splice(i, 1)[0];
      d =
        c === undefined
          ? { start, count: 0, firstAt: at, lastAt: at, sessions: [], label: null, labelAt: -1, selector: e.selector ?? '', selectorAt: at }
          : { ...c, sessions: copyPairMap(c.sessions) };
      draft.owned.set(start, d);
    }
    d.count += 1;
    d.firstAt = Math.min(d.firstAt, at);
    d.lastAt = Math.max(d.lastAt, at);
    d.sessions = updatePair(d.sessions, e.sessionId, (prev) => (prev === undefined ? [1, at] : [prev[0] + 1, Math.max(prev[1], at)]));
    const selector = e.selector ?? '';
    if (isLater({ ts: at, value: selector }, { ts: d.selectorAt, value: d.selector })) {
      d.selector = selector;
      d.selectorAt = at;
    }
    const label = e.label?.trim() ?? '';
    if (label !== '' && isLater({ ts: at, value: label }, d.label === null ? null : { ts: d.labelAt, value: d.label })) {
      d.label = label;
      d.labelAt = at;
    }
  }
  return {
    clusters: [...drafts.values()].map((d) => ({ key: d.key, days: d.kept.concat([...d.owned.values()].map(publishDay)).slice() })),
  };
}

/** Makes the clusters of `update` current. */
export function commitClusterUpdate(state: ClusterState, update: ClusterUpdate): void {
  for (const c of update.clusters) {
    let pages = state.sites.get(c.key.siteId);
    if (pages === undefined) state.sites.set(c.key.siteId, (pages = new Map()));
    let byKey = pages.get(c.key.page);
    if (byKey === undefined) pages.set(c.key.page, (byKey = new Map()));
    byKey.set(`${c.key.selector}\u0000${c.key.signalType}`, c);
  }
}

/** `foldSignals` then `commitClusterUpdate`. */
export function applySignals(state: ClusterState, events: readonly EngineEvent[]): ClusterUpdate {
  const update = foldSignals(state, events);
  commitClusterUpdate(state, update);
  return update;
}

/**
 * Drops day buckets that left the cluster window at `now` (and clusters left empty) and returns the keys of the
 * clusters that lost days: their issue counts fell with no new event, so the processor re-decides them.
 */
export function evictClusters(state: ClusterState, now: number): ClusterKey[] {
  const cutoff = clusterWindowStart(now);
  const changed: ClusterKey[] = [];
  for (const [siteId, pages] of state.sites) {
    for (const [page, byKey] of pages) {
      for (const [k, c] of byKey) {
        if (!c.days.some((d) => d.start < cutoff)) continue;
        changed.push(c.key);
        const kept = c.days.filter((d) => d.start >= cutoff);
        if (kept.length === 0) byKey.delete(k);
        else byKey.set(k, { key: c.key, days: kept });
      }
      if (byKey.size === 0) pages.delete(page);
    }
    if (pages.size === 0) state.sites.delete(siteId);
  }
  return changed;
}

/** Everything about a cluster in the window at `now`, before it is cut down to a summary. */
export interface ClusterView {
  readonly key: ClusterKey;
  readonly selector: Latest;
  readonly label: Latest | null;
  readonly signalCount: number;
  readonly firstSignalAt: number;
  readonly lastSignalAt: number;
  /** Per session: signals in the window and latest signal time. */
  readonly sessions: ReadonlyMap<string, SessionDay>;
}

/** The cluster's window at `now`, or null when nothing of it is left in the window. */
export function viewCluster(cluster: Cluster | undefined, now: number): ClusterView | null {
  if (cluster === undefined) return null;
  const cutoff = clusterWindowStart(now);
  const sessions = new Map<string, SessionDay>();
  let signalCount = 0;
  let firstSignalAt = Infinity;
  let lastSignalAt = -Infinity;
  let selector: Latest | null = null;
  let label: Latest | null = null;
  for (const d of cluster.days) {
    if (d.start < cutoff) continue;
    signalCount += d.count;
    firstSignalAt = Math.min(firstSignalAt, d.start + d.firstAt);
    lastSignalAt = Math.max(lastSignalAt, d.start + d.lastAt);
    const daySelector = { ts: d.start + d.selectorAt, value: d.selector };
    if (isLater(daySelector, selector)) selector = daySelector;
    if (d.label !== null) {
      const dayLabel = { ts: d.start + d.labelAt, value: d.label };
      if (isLater(dayLabel, label)) label = dayLabel;
    }
    const dayStart = d.start;
    forEachPair(d.sessions, (sid, count, lastAt) => {
      const lastTs = dayStart + lastAt;
      const prev = sessions.get(sid);
      sessions.set(sid, prev === undefined ? { count, lastTs } : { count: prev.count + count, lastTs: Math.max(prev.lastTs, lastTs) });
    });
  }
  if (signalCount === 0 || selector === null) return null;
  return { key: cluster.key, selector, label, signalCount, firstSignalAt, lastSignalAt, sessions };
}

/** Top `limit` sessions by signals desc, then latest signal desc, then session id asc. */
export function topEvidence(sessions: ReadonlyMap<string, SessionDay>, limit: number = EVIDENCE_SESSIONS): EvidenceSession[] {
  return [...sessions]
    .map(([sessionId, s]) => ({ sessionId, signals: s.count, lastSignalAt: s.lastTs }))
    .sort((a, b) => b.signals - a.signals || b.lastSignalAt - a.lastSignalAt || compareStrings(a.sessionId, b.sessionId))
    .slice(0, limit);
}

/** Cuts a view down to the issue fields; `now` places the 24 h page window for `windowAffectedSessions`. */
export function summarizeView(view: ClusterView, now: number, evidenceLimit: number = EVIDENCE_SESSIONS): ClusterSummary {
  const pageCutoff = pageWindowStart(now);
  let windowAffectedSessions = 0;
  for (const s of view.sessions.values()) if (s.lastTs >= pageCutoff) windowAffectedSessions++;
  return {
    key: view.key,
    selector: view.selector.value,
    label: view.label?.value ?? null,
    signalCount: view.signalCount,
    affectedSessions: view.sessions.size,
    windowAffectedSessions,
    firstSignalAt: view.firstSignalAt,
    lastSignalAt: view.lastSignalAt,
    evidence: topEvidence(view.sessions, evidenceLimit),
  };
}

/** The summary of a cluster at `now`, or null when it has no signal left in the window. */
export function summarizeCluster(cluster: Cluster | undefined, now: number, evidenceLimit: number = EVIDENCE_SESSIONS): ClusterSummary | null {
  const view = viewCluster(cluster, now);
  return view === null ? null : summarizeView(view, now, evidenceLimit);
}

/**
 * Distinct sessions of the cluster whose latest signal is strictly after `since` (epoch ms), within the window at
 * `now`: the "renewed activity" count used to reopen a resolved issue as regressed.
 */
export function sessionsActiveSince(cluster: Cluster | undefined, since: number, now: number): number {
  const view = viewCluster(cluster, now);
  if (view === null) return 0;
  let n = 0;
  for (const s of view.sessions.values()) if (s.lastTs > since) n++;
  return n;
}
