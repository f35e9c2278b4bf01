import { dayOf, forEachDaySession, mergedDay } from './cluster-days.ts';
import { EVIDENCE_SESSIONS, rebuildTop, topWithBatch, type BatchSession } from './cluster-evidence.ts';
import { foldSignals, type ClusterUpdate } from './cluster-fold.ts';
import {
  Cluster,
  elementOf,
  elementsIn,
  type ClusterIndex,
  type ClusterKey,
  type ClusterState,
} from './cluster-model.ts';
import { buildIndex, buildUsers, dayEntries, elementEntries } from './cluster-sessions.ts';
import type { EngineEvent } from './events.ts';
import { work } from './last-seen.ts';
import { SMALL_LIMIT } from './small-collections.ts';
import { DAY_MS, HOUR_MS, clusterWindowStart } from './time.ts';

/** Making a batch's patches current, and days leaving the window (cluster-state.ts has the design). */

/** Applies the patches of `update` in place. O(the update's size). */
export function commitClusterUpdate(state: ClusterState, update: ClusterUpdate): void {
  for (const p of update.clusters) {
    const el = elementOf(state, p.key.siteId, p.key.page, p.key.selector);
    let c = el.clusters.find((x) => x.signalType === p.key.signalType);
    if (c === undefined) {
      c = new Cluster(el, p.key.signalType);
      // Exact-size arrays (concat, not push or spread: those keep V8's growth slack), as there can be a million of these.
      el.clusters = el.clusters.concat(c);
    }
    const touched: BatchSession[] = [];
    // The index's kept sum (if any) grows by the batch's days, as the days do.
    const sum = c.index?.sum ?? null;
    for (const dp of p.days.values()) {
      if (sum !== null) {
        if (dp.day < sum.cutoffDay) (c.index as ClusterIndex).sum = null;
        else sum.addPatch(dp);
      }
      const days = c.days;
      // From the end: days mostly arrive in order, so today's is the last, and the older arrays are not touched.
      const i = days.findLastIndex((x) => dayOf(x) === dp.day);
      const next = mergedDay(days[i], dp);
      // Exact-size (a day is an array, so it is wrapped: concat would spread it).
      c.days = i < 0 ? days.concat([next]) : days.map((x, j) => (j === i ? next : x));
    }
    if (c.index === null) {
      // The days now hold the batch's sessions; past SMALL_LIMIT entries the cluster gets its index, built from them.
      if (dayEntries(c) > SMALL_LIMIT) c.index = buildIndex(c);
    } else {
      for (const [sid, s] of p.sessions) {
        work.steps++;
        // Read before the change, for the top (the lookup the change then makes is a cache hit).
        touched.push({ id: sid, committed: c.index.get(sid), batch: s });
        c.index.observe(sid, s.t, s.n);
      }
    }
    const top = c.top;
    if (c.index === null || !c.index.isLarge) c.top = null;
    // A top is kept only on a large index, so this batch's sessions were read into `touched` above.
    else if (top === null) rebuildTop(c);
    else c.top = topWithBatch(top, touched, EVIDENCE_SESSIONS);
  }
  // After the clusters: an element without an index reads their days, which now hold the batch.
  for (const ep of update.elements) {
    const el = elementOf(state, ep.siteId, ep.page, ep.selector);
    const users = el.users;
    if (users === null) {
      if (elementEntries(el) > SMALL_LIMIT) el.users = buildUsers(el);
      continue;
    }
    for (const [sid, t] of ep.users) {
      work.steps++;
      users.observe(sid, t, 1);
    }
  }
}

/** `foldSignals` then `commitClusterUpdate`. */
export function applySignals(state: ClusterState, events: readonly EngineEvent[]): ClusterUpdate {
  const update = foldSignals(state, events);
  commitClusterUpdate(state, update);
  return update;
}

/**
 * Drops day buckets that left the cluster window at `now` (and clusters and elements left empty) and returns the
 * keys of the clusters that lost days: their issue counts fell with no new event, so the processor re-decides
 * them. Cost: O(clusters) to find them, plus the sessions of the days that left, plus (once per day per cluster
 * that lost a day) a re-ranking of its evidence over its sessions.
 */
export function evictClusters(state: ClusterState, now: number): ClusterKey[] {
  const cutoff = clusterWindowStart(now);
  const cutoffDay = cutoff / DAY_MS;
  const changed: ClusterKey[] = [];
  for (const [siteId, pages] of state.sites) {
    for (const [page, els] of pages) {
      let emptied = false;
      for (const el of elementsIn(els)) {
        let lost = false;
        for (let i = el.clusters.length - 1; i >= 0; i--) {
          const c = el.clusters[i] as Cluster;
          if (!c.days.some((d) => dayOf(d) < cutoffDay)) continue;
          lost = true;
          // A plain key: the pending list must not keep an evicted cluster (its days and sessions) alive.
          changed.push({ siteId: c.siteId, page: c.page, selector: c.selector, signalType: c.signalType });
          const kept = c.days.filter((d) => dayOf(d) >= cutoffDay);
          const index = c.index;
          if (index !== null) {
            index.sum = null;
            for (const d of c.days) if (dayOf(d) < cutoffDay) forEachDaySession(d, (sid, n) => index.addCount(sid, -n));
          }
          c.days = kept;
          index?.removeBefore(cutoff);
          // Back to the derived form once the days are small again (half the limit, so a cluster on the edge does not flip).
          if (index !== null && dayEntries(c) <= SMALL_LIMIT / 2) c.index = null;
          rebuildTop(c);
          if (kept.length === 0) el.clusters = el.clusters.filter((x) => x !== c);
        }
        if (lost && el.users !== null) {
          el.users.removeBefore(cutoff / HOUR_MS);
          if (elementEntries(el) <= SMALL_LIMIT / 2) el.users = null;
        }
        if (el.clusters.length === 0) emptied = true;
      }
      if (!emptied) continue;
      // Rebuilt after the walk (not deleted during it): an array form is replaced, not changed in place.
      const kept = [...elementsIn(els)].filter((el) => el.clusters.length > 0);
      if (kept.length === 0) pages.delete(page);
      else pages.set(page, els instanceof Map ? new Map(kept.map((el) => [el.selector, el])) : kept);
    }
    if (pages.size === 0) state.sites.delete(siteId);
  }
  return changed;
}
