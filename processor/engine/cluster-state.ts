import { isSignalEvent, type EngineEvent } from './events.ts';
import { canonicalSelector } from './selectors.ts';
import { DAY_MS, bucketStart, clusterWindowStart, pageWindowStart } from './time.ts';
import { compareStrings } from './util.ts';

/**
 * Incremental issue-cluster state: signals grouped by (site, page, canonical selector, signal type), in UTC-day
 * buckets over the last 7 days (time.ts `clusterWindowStart`). Each day keeps, per session, its signal count and
 * last signal time, plus the latest label and raw selector seen; that is enough to answer every issue field exactly
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

/** The most recent value of a field, with what decides "most recent": (ts, event id), so ties are deterministic. */
export interface Latest {
  readonly ts: number;
  readonly id: string;
  readonly value: string;
}

/** One session's signals in one day bucket. */
export interface SessionDay {
  readonly count: number;
  /** Epoch ms of its latest signal in that day. */
  readonly lastTs: number;
}

/** One UTC day of one cluster. Never mutated once committed. */
export interface ClusterDay {
  /** Day start, epoch ms (00:00 UTC). */
  readonly start: number;
  readonly count: number;
  readonly firstTs: number;
  readonly lastTs: number;
  readonly sessions: ReadonlyMap<string, SessionDay>;
  /** Latest non-empty label of the day, if any. */
  readonly label: Latest | null;
  /** Latest raw selector of the day ('' value when the signals had none). */
  readonly selector: Latest;
}

export interface Cluster {
  readonly key: ClusterKey;
  readonly days: ReadonlyMap<number, ClusterDay>;
}

/** Clusters by site, then page, then `${selector}\u0000${signalType}`. */
export interface ClusterState {
  readonly sites: Map<string, Map<string, Map<string, Cluster>>>;
}

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

/** Whether (ts, id) of `a` is later than `b`. */
export function isLater(a: { ts: number; id: string }, b: { ts: number; id: string } | null): boolean {
  return b === null || a.ts > b.ts || (a.ts === b.ts && a.id > b.id);
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
  firstTs: number;
  lastTs: number;
  sessions: Map<string, SessionDay>;
  label: Latest | null;
  selector: Latest;
}

/** Folds new signal events into copies of the clusters they touch; `state` is not changed. Other events are skipped. */
export function foldSignals(state: ClusterState, events: readonly EngineEvent[]): ClusterUpdate {
  const drafts = new Map<string, { key: ClusterKey; days: Map<number, ClusterDay | DraftDay>; owned: Set<number> }>();
  for (const e of events) {
    if (!isSignalEvent(e)) continue;
    const key = clusterKeyOf(e);
    const ks = clusterKeyString(key);
    let draft = drafts.get(ks);
    if (draft === undefined) {
      draft = { key, days: new Map(getCluster(state, key)?.days ?? []), owned: new Set() };
      drafts.set(ks, draft);
    }
    const start = bucketStart(e.ts, DAY_MS);
    let day = draft.days.get(start) as DraftDay | undefined;
    if (!draft.owned.has(start)) {
      day =
        day === undefined
          ? { start, count: 0, firstTs: e.ts, lastTs: e.ts, sessions: new Map(), label: null, selector: { ts: e.ts, id: e.id, value: e.selector ?? '' } }
          : { ...day, sessions: new Map(day.sessions) };
      draft.days.set(start, day);
      draft.owned.add(start);
    }
    const d = day as DraftDay;
    d.count += 1;
    d.firstTs = Math.min(d.firstTs, e.ts);
    d.lastTs = Math.max(d.lastTs, e.ts);
    const prev = d.sessions.get(e.sessionId);
    d.sessions.set(e.sessionId, { count: (prev?.count ?? 0) + 1, lastTs: Math.max(prev?.lastTs ?? e.ts, e.ts) });
    if (isLater(e, d.selector)) d.selector = { ts: e.ts, id: e.id, value: e.selector ?? '' };
    const label = e.label?.trim() ?? '';
    if (label !== '' && isLater(e, d.label)) d.label = { ts: e.ts, id: e.id, value: label };
  }
  return { clusters: [...drafts.values()].map((d) => ({ key: d.key, days: d.days })) };
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
        let stale = false;
        for (const start of c.days.keys()) if (start < cutoff) stale = true;
        if (!stale) continue;
        changed.push(c.key);
        const kept = new Map([...c.days].filter(([start]) => start >= cutoff));
        if (kept.size === 0) byKey.delete(k);
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
  for (const d of cluster.days.values()) {
    if (d.start < cutoff) continue;
    signalCount += d.count;
    firstSignalAt = Math.min(firstSignalAt, d.firstTs);
    lastSignalAt = Math.max(lastSignalAt, d.lastTs);
    if (isLater(d.selector, selector)) selector = d.selector;
    if (d.label !== null && isLater(d.label, label)) label = d.label;
    for (const [sid, s] of d.sessions) {
      const prev = sessions.get(sid);
      sessions.set(sid, prev === undefined ? s : { count: prev.count + s.count, lastTs: Math.max(prev.lastTs, s.lastTs) });
    }
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
