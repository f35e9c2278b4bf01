import {
  applySignals,
  clusterKeyOf,
  clusterKeyString,
  createClusterState,
  evictClusters,
  isLater,
  siteClusters,
  summarizeCluster,
  topEvidence,
  type ClusterState,
  type ClusterSummary,
  type Latest,
  type SessionDay,
} from './cluster-state.ts';
import { draftIssue, opensIssue, rankIssues, type IssueDraft } from './clustering.ts';
import { confusionScore, overallScore, siteMeanFriction, type PageWindowStats } from './confusion-score.ts';
import {
  aggregateElement,
  elementDraft,
  elementsFromState,
  rankElements,
  type ElementAggregate,
  type ElementDraft,
} from './elements.ts';
import { isSignalEvent, type EngineEvent } from './events.ts';
import { clusterWindowStart, pageWindowStart } from './time.ts';
import { compareStrings, sortedRecord } from './util.ts';
import { applyEvents, createWindowState, evictWindows, siteStats, type WindowState } from './windows.ts';

/**
 * From-scratch recomputation over stored rows, and the snapshot of a site that both paths produce.
 *
 * `recomputeSite` reads rows the way a SQL query would (filter by time, group, count distinct), sharing no
 * aggregation code with the bucketed incremental state; `snapshotFromState` reads the incremental state. The
 * exactness property (recompute.test.ts) is that the two snapshots are deep-equal for any stream, whatever its
 * order, batching, duplicates and redeliveries, once the store has deduplicated it. `friction recompute --site`
 * uses `recomputeSite` to rewrite a site's aggregates and `rebuildState` to reseed the processor's memory.
 */

/** One page in a site snapshot. */
export interface PageSnapshot {
  readonly page: string;
  readonly stats: PageWindowStats;
  /** 0..100, one decimal. */
  readonly score: number;
  readonly dominantSignal: string | null;
  /** Points per session, raw. */
  readonly friction: number;
}

/** A site's derived state at `now`: what the processor flushes and the API serves. */
export interface SiteSnapshot {
  readonly siteId: string;
  /** Epoch ms the snapshot describes. */
  readonly now: number;
  /** The prior the page scores used (null: the global prior). */
  readonly siteMeanFriction: number | null;
  readonly overallScore: number;
  /** Pages with sessions in the 24 h window, by score desc then page. */
  readonly pages: readonly PageSnapshot[];
  /** Clusters with signals in the 7-day window, by key. */
  readonly clusters: readonly ClusterSummary[];
  /** Clusters that pass the issue threshold, as issues, ranked (clustering.ts `compareIssues`). */
  readonly issues: readonly IssueDraft[];
  /** Elements, ranked (elements.ts `compareElements`). */
  readonly elements: readonly ElementAggregate[];
}

function normalizeStats(s: PageWindowStats): PageWindowStats {
  return { sessions: s.sessions, pageViews: s.pageViews, signals: sortedRecord(new Map(Object.entries(s.signals))) };
}

/** Finishes a snapshot from page stats, cluster summaries and elements (shared by both paths: scoring only). */
export function buildSnapshot(
  siteId: string,
  now: number,
  pageStats: ReadonlyMap<string, PageWindowStats>,
  clusters: readonly ClusterSummary[],
  elements: readonly ElementAggregate[],
): SiteSnapshot {
  const mean = siteMeanFriction([...pageStats.values()]);
  const pages = [...pageStats]
    .map(([page, stats]) => ({
      page,
      stats: normalizeStats(stats),
      ...confusionScore(stats, { siteMeanFriction: mean }),
    }))
    .sort((a, b) => b.score - a.score || compareStrings(a.page, b.page));
  const sortedClusters = [...clusters].sort((a, b) => compareStrings(clusterKeyString(a.key), clusterKeyString(b.key)));
  const issues = rankIssues(
    sortedClusters.filter(opensIssue).map((c) => draftIssue(c, pageStats.get(c.key.page)?.sessions ?? 0, now)),
  );
  return {
    siteId,
    now,
    siteMeanFriction: mean,
    overallScore: overallScore(pages.map((p) => ({ score: p.score, sessions: p.stats.sessions }))),
    pages,
    clusters: sortedClusters,
    issues,
    elements: rankElements(elements),
  };
}

/** The snapshot of a site read from the incremental state. */
export function snapshotFromState(
  windows: WindowState,
  clusters: ClusterState,
  siteId: string,
  now: number,
): SiteSnapshot {
  const summaries: ClusterSummary[] = [];
  for (const c of siteClusters(clusters, siteId)) {
    const s = summarizeCluster(c, now);
    if (s !== null) summaries.push(s);
  }
  return buildSnapshot(
    siteId,
    now,
    siteStats(windows, siteId, now),
    summaries,
    elementsFromState(clusters, siteId, now),
  );
}

/** Page stats of one site at `now`, straight from rows: pages with at least one counted event in the window. */
export function recomputePageStats(
  rows: readonly EngineEvent[],
  siteId: string,
  now: number,
): Map<string, PageWindowStats> {
  const cutoff = pageWindowStart(now);
  const acc = new Map<string, { sessions: Set<string>; pageViews: number; signals: Map<string, number> }>();
  for (const r of rows) {
    if (r.siteId !== siteId || r.ts < cutoff) continue;
    const isView = r.type === 'page_view';
    if (!isView && !isSignalEvent(r)) continue;
    let a = acc.get(r.page);
    if (a === undefined) acc.set(r.page, (a = { sessions: new Set(), pageViews: 0, signals: new Map() }));
    a.sessions.add(r.sessionId);
    if (isView) a.pageViews++;
    else a.signals.set(r.signal as string, (a.signals.get(r.signal as string) ?? 0) + 1);
  }
  return new Map(
    [...acc].map(([page, a]) => [
      page,
      { sessions: a.sessions.size, pageViews: a.pageViews, signals: sortedRecord(a.signals) },
    ]),
  );
}

/** Cluster summaries of one site at `now`, straight from rows. */
export function recomputeClusterSummaries(rows: readonly EngineEvent[], siteId: string, now: number): ClusterSummary[] {
  const cutoff = clusterWindowStart(now);
  const pageCutoff = pageWindowStart(now);
  const acc = new Map<
    string,
    {
      key: ReturnType<typeof clusterKeyOf>;
      count: number;
      first: number;
      last: number;
      sessions: Map<string, SessionDay>;
      recent: Set<string>;
      selector: Latest | null;
      label: Latest | null;
    }
  >();
  for (const r of rows) {
    if (r.siteId !== siteId || r.ts < cutoff || !isSignalEvent(r)) continue;
    const key = clusterKeyOf(r);
    const k = clusterKeyString(key);
    let a = acc.get(k);
    if (a === undefined)
      acc.set(
        k,
        (a = {
          key,
          count: 0,
          first: r.ts,
          last: r.ts,
          sessions: new Map(),
          recent: new Set(),
          selector: null,
          label: null,
        }),
      );
    a.count++;
    a.first = Math.min(a.first, r.ts);
    a.last = Math.max(a.last, r.ts);
    const s = a.sessions.get(r.sessionId);
    a.sessions.set(r.sessionId, { count: (s?.count ?? 0) + 1, lastTs: Math.max(s?.lastTs ?? r.ts, r.ts) });
    if (r.ts >= pageCutoff) a.recent.add(r.sessionId);
    const selector = { ts: r.ts, value: r.selector ?? '' };
    if (isLater(selector, a.selector)) a.selector = selector;
    const label = { ts: r.ts, value: r.label?.trim() ?? '' };
    if (label.value !== '' && isLater(label, a.label)) a.label = label;
  }
  return [...acc.values()].map((a) => ({
    key: a.key,
    selector: a.selector?.value ?? '',
    label: a.label?.value ?? null,
    signalCount: a.count,
    affectedSessions: a.sessions.size,
    windowAffectedSessions: a.recent.size,
    firstSignalAt: a.first,
    lastSignalAt: a.last,
    evidence: topEvidence(a.sessions),
  }));
}

/** Element aggregates of one site at `now`, straight from rows. */
export function recomputeElements(rows: readonly EngineEvent[], siteId: string, now: number): ElementAggregate[] {
  const cutoff = clusterWindowStart(now);
  const acc = new Map<string, ElementDraft<Set<string>> & { users: Set<string> }>();
  for (const r of rows) {
    if (r.siteId !== siteId || r.ts < cutoff || !isSignalEvent(r)) continue;
    const key = clusterKeyOf(r);
    if (key.selector === '') continue;
    const k = `${r.page}\u0000${key.selector}`;
    let a = acc.get(k);
    if (a === undefined) acc.set(k, (a = { ...elementDraft(r.page, key.selector, r.ts), users: new Set() }));
    a.signals.set(r.signal, (a.signals.get(r.signal) ?? 0) + 1);
    let typeUsers = a.byType.get(r.signal);
    if (typeUsers === undefined) a.byType.set(r.signal, (typeUsers = new Set()));
    typeUsers.add(r.sessionId);
    a.users.add(r.sessionId);
    a.last = Math.max(a.last, r.ts);
    const selector = { ts: r.ts, value: r.selector ?? '' };
    if (isLater(selector, a.selector)) a.selector = selector;
    const label = { ts: r.ts, value: r.label?.trim() ?? '' };
    if (label.value !== '' && isLater(label, a.label)) a.label = label;
  }
  return rankElements(
    [...acc.values()].map((a) =>
      aggregateElement({
        siteId,
        page: a.page,
        canonicalSelector: a.canonical,
        selector: a.selector as Latest,
        label: a.label,
        signals: a.signals,
        affectedByType: new Map([...a.byType].map(([t, users]) => [t, users.size])),
        affectedUsers: a.users.size,
        lastSignalAt: a.last,
      }),
    ),
  );
}

/** The snapshot of a site recomputed from its stored rows (any order; must be unique by event id). */
export function recomputeSite(rows: readonly EngineEvent[], siteId: string, now: number): SiteSnapshot {
  return buildSnapshot(
    siteId,
    now,
    recomputePageStats(rows, siteId, now),
    recomputeClusterSummaries(rows, siteId, now),
    recomputeElements(rows, siteId, now),
  );
}

/**
 * Builds the processor's in-memory state from stored rows (at start, or after `friction recompute`): every row
 * folded in, then everything outside the windows at `now` evicted. Rows must be unique by event id; pass at least
 * the last 7 days (the cluster window) so issues are whole.
 */
export function rebuildState(
  rows: readonly EngineEvent[],
  now: number,
): { windows: WindowState; clusters: ClusterState } {
  const windows = createWindowState();
  const clusters = createClusterState();
  applyEvents(windows, rows);
  applySignals(clusters, rows);
  evictWindows(windows, now);
  evictClusters(clusters, now);
  return { windows, clusters };
}
