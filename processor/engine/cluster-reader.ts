import { dayOf, forEachDaySession } from './cluster-days.ts';
import {
  EVIDENCE_SESSIONS,
  topEvidence,
  topWithBatch,
  type BatchSession,
  type EvidenceSession,
  type SessionDay,
} from './cluster-evidence.ts';
import type { ClusterPatch, ClusterUpdate, ElementPatch } from './cluster-fold.ts';
import {
  clusterKeyString,
  elementKeyString,
  getCluster,
  getElement,
  isLater,
  type Cluster,
  type ClusterKey,
  type ClusterState,
  type Latest,
} from './cluster-model.ts';
import { sessionsOf, usersOf } from './cluster-sessions.ts';
import { totals } from './cluster-totals.ts';
import { work, type Seen, type SeenReads } from './last-seen.ts';
import { DAY_MS, HOUR_MS, clusterWindowStart, pageWindowStart } from './time.ts';

/** Summaries of clusters and elements at `now`, committed or with a batch laid over (cluster-state.ts has the design). */

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

/** One element's parts before elements.ts finishes it (scores, dominant signal, recommendation). */
export interface ElementParts {
  readonly siteId: string;
  readonly page: string;
  readonly canonicalSelector: string;
  readonly selector: Latest;
  readonly label: Latest | null;
  readonly signals: ReadonlyMap<string, number>;
  readonly affectedByType: ReadonlyMap<string, number>;
  readonly affectedUsers: number;
  readonly lastSignalAt: number;
}

/** Distinct sessions whose latest time is ≥ `cutoff`, in `index` with the batch's `batch` sessions laid over it. */
function countSince(
  index: SeenReads | null | undefined,
  batch: Iterable<[string, number]>,
  cutoff: number,
  cap: number = Infinity,
): number {
  // NOTE: with a cap the committed count may be cut to `cap`; the batch's sessions counted below are not in it, so
  // the sum still reaches `cap` exactly when the true count does.
  let n = index?.countSince(cutoff, cap) ?? 0;
  for (const [id, t] of batch) {
    work.steps++;
    if (t < cutoff) continue;
    const prev = index?.latest(id);
    if (prev === undefined || prev < cutoff) n++;
  }
  return Math.min(n, cap);
}

function* latestTimes(p: ClusterPatch | undefined): Iterable<[string, number]> {
  for (const [id, s] of p?.sessions ?? []) yield [id, s.t];
}

/** The evidence at `now`; see the module note for the scan taken while a day outside the window is held. */
function evidence(
  c: Cluster | undefined,
  sessions: SeenReads | undefined,
  p: ClusterPatch | undefined,
  now: number,
  stale: boolean,
  limit: number,
): EvidenceSession[] {
  const candidates = new Map<string, SessionDay>();
  const exactTop =
    c === undefined || sessions === undefined || !sessions.isLarge || (c.top !== null && limit <= EVIDENCE_SESSIONS);
  if (stale || !exactTop) {
    // The slow path: sum the sessions of the days in the window.
    const cutoff = clusterWindowStart(now);
    const merge = (sid: string, count: number, lastTs: number): void => {
      work.steps++;
      const prev = candidates.get(sid);
      candidates.set(
        sid,
        prev === undefined ? { count, lastTs } : { count: prev.count + count, lastTs: Math.max(prev.lastTs, lastTs) },
      );
    };
    for (const d of c?.days ?? [])
      if (dayOf(d) * DAY_MS >= cutoff) forEachDaySession(d, (sid, n, at) => merge(sid, n, dayOf(d) * DAY_MS + at));
    for (const d of p?.days.values() ?? [])
      if (d.day * DAY_MS >= cutoff) for (const [sid, [n, at]] of d.sessions) merge(sid, n, d.day * DAY_MS + at);
    return topEvidence(candidates, limit);
  }
  // No day outside the window is held, so every session's count is its count in the window. Counts only grow, so
  // the top is among the committed top (or all sessions of a small cluster) and the sessions of the batch.
  const top = c?.top ?? null;
  if (top !== null) {
    const touched: BatchSession[] = [];
    for (const [id, batch] of p?.sessions ?? []) touched.push({ id, committed: sessions?.get(id), batch });
    return topWithBatch(top, touched, limit);
  }
  if (c !== undefined && sessions !== undefined)
    sessions.forEach((id, t, n) => candidates.set(id, { count: n, lastTs: t }));
  for (const [id, s] of p?.sessions ?? []) {
    work.steps++;
    const prev = candidates.get(id) ?? (sessions?.get(id) as Seen | undefined);
    const before = prev === undefined ? undefined : 'n' in prev ? { count: prev.n, lastTs: prev.t } : prev;
    candidates.set(
      id,
      before === undefined
        ? { count: s.n, lastTs: s.t }
        : { count: before.count + s.n, lastTs: Math.max(before.lastTs, s.t) },
    );
  }
  return topEvidence(candidates, limit);
}

function summarize(
  c: Cluster | undefined,
  p: ClusterPatch | undefined,
  now: number,
  limit: number,
): ClusterSummary | null {
  const tot = totals(c, p, now);
  if (tot === null) return null;
  // A plain key: the summary outlives the batch, and must not hold (or compare as) the cluster itself.
  const key = p?.key ?? {
    siteId: (c as Cluster).siteId,
    page: (c as Cluster).page,
    selector: (c as Cluster).selector,
    signalType: (c as Cluster).signalType,
  };
  const sessions = c === undefined ? undefined : sessionsOf(c);
  return {
    key,
    selector: tot.selector.value,
    label: tot.label?.value ?? null,
    signalCount: tot.signalCount,
    affectedSessions: countSince(sessions, latestTimes(p), clusterWindowStart(now)),
    windowAffectedSessions: countSince(sessions, latestTimes(p), pageWindowStart(now)),
    firstSignalAt: tot.firstSignalAt,
    lastSignalAt: tot.lastSignalAt,
    evidence: evidence(c, sessions, p, now, tot.stale, limit),
  };
}

/** The summary of a committed cluster at `now`, or null when it has no signal left in the window. */
export function summarizeCluster(
  cluster: Cluster | undefined,
  now: number,
  evidenceLimit: number = EVIDENCE_SESSIONS,
): ClusterSummary | null {
  return summarize(cluster, undefined, now, evidenceLimit);
}

/**
 * Distinct sessions of a committed cluster whose latest signal is strictly after `since` (epoch ms), within the
 * window at `now`: the "renewed activity" count used to reopen a resolved issue as regressed. With `cap`, counting
 * stops there (the processor only asks whether MIN_ISSUE_SESSIONS is reached): `since` is any instant, so the hour
 * holding it is scanned, and the cap keeps that scan short once the later hours have enough sessions.
 */
export function sessionsActiveSince(
  cluster: Cluster | undefined,
  since: number,
  now: number,
  cap: number = Infinity,
): number {
  return activeSince(cluster, undefined, since, now, cap);
}

function activeSince(
  c: Cluster | undefined,
  p: ClusterPatch | undefined,
  since: number,
  now: number,
  cap: number,
): number {
  if (totals(c, p, now) === null) return 0;
  return countSince(
    c === undefined ? undefined : sessionsOf(c),
    latestTimes(p),
    Math.max(Math.floor(since) + 1, clusterWindowStart(now)),
    cap,
  );
}

/**
 * Reads clusters and elements as they are once `update` is committed (the committed state with the batch's
 * patches laid over it); without an update, reads the committed state. Reads cost O(what the batch touched).
 */
export class ClusterReader {
  private readonly state: ClusterState;
  private readonly patches = new Map<string, ClusterPatch>();
  private readonly elementPatches = new Map<string, { users: ElementPatch | undefined; clusters: ClusterPatch[] }>();

  constructor(state: ClusterState, update?: ClusterUpdate) {
    this.state = state;
    for (const p of update?.clusters ?? []) {
      this.patches.set(clusterKeyString(p.key), p);
      this.elementEntry(p.key.siteId, p.key.page, p.key.selector).clusters.push(p);
    }
    for (const ep of update?.elements ?? []) this.elementEntry(ep.siteId, ep.page, ep.selector).users = ep;
  }

  private elementEntry(
    siteId: string,
    page: string,
    selector: string,
  ): { users: ElementPatch | undefined; clusters: ClusterPatch[] } {
    const k = elementKeyString(siteId, page, selector);
    let e = this.elementPatches.get(k);
    if (e === undefined) this.elementPatches.set(k, (e = { users: undefined, clusters: [] }));
    return e;
  }

  /** The summary of a cluster at `now`, or null when it has no signal in the window. */
  summary(key: ClusterKey, now: number, evidenceLimit: number = EVIDENCE_SESSIONS): ClusterSummary | null {
    return summarize(getCluster(this.state, key), this.patches.get(clusterKeyString(key)), now, evidenceLimit);
  }

  /** Sessions of a cluster whose latest signal is after `since` and in the window at `now` (see `sessionsActiveSince`). */
  activeSince(key: ClusterKey, since: number, now: number, cap: number = Infinity): number {
    return activeSince(getCluster(this.state, key), this.patches.get(clusterKeyString(key)), since, now, cap);
  }

  /** An element's parts at `now` (every signal type on it), or null when it has no signal in the window. */
  elementParts(siteId: string, page: string, selector: string, now: number): ElementParts | null {
    const el = getElement(this.state, siteId, page, selector);
    const staged = this.elementPatches.get(elementKeyString(siteId, page, selector));
    const cutoff = clusterWindowStart(now);
    const types = new Map<string, { c: Cluster | undefined; p: ClusterPatch | undefined }>();
    for (const c of el?.clusters ?? []) types.set(c.signalType, { c, p: undefined });
    for (const p of staged?.clusters ?? []) types.set(p.key.signalType, { c: types.get(p.key.signalType)?.c, p });
    const signals = new Map<string, number>();
    const affectedByType = new Map<string, number>();
    let latestSelector: Latest | null = null;
    let label: Latest | null = null;
    let lastSignalAt = -Infinity;
    for (const [type, { c, p }] of types) {
      work.steps++;
      const tot = totals(c, p, now);
      if (tot === null) continue;
      signals.set(type, tot.signalCount);
      affectedByType.set(type, countSince(c === undefined ? undefined : sessionsOf(c), latestTimes(p), cutoff));
      if (isLater(tot.selector, latestSelector)) latestSelector = tot.selector;
      if (tot.label !== null && isLater(tot.label, label)) label = tot.label;
      lastSignalAt = Math.max(lastSignalAt, tot.lastSignalAt);
    }
    if (latestSelector === null) return null;
    return {
      siteId,
      page,
      canonicalSelector: selector,
      selector: latestSelector,
      label,
      signals,
      affectedByType,
      affectedUsers: countSince(
        el === undefined ? undefined : usersOf(el),
        staged?.users?.users ?? [],
        cutoff / HOUR_MS,
      ),
      lastSignalAt,
    };
  }
}
