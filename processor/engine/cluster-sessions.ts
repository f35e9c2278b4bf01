import { dayOf, FIELDS, forEachDaySession, sessionMap, type ClusterDay } from './cluster-days.ts';
import { ClusterIndex, type Cluster, type ElementClusters } from './cluster-model.ts';
import { LastSeenIndex, LatestIndex, work, type Seen, type SeenReads } from './last-seen.ts';
import { DAY_MS, HOUR_MS } from './time.ts';

/** The sessions of a cluster or element: derived from its days while they are few, else its index. */

/** (session, day) entries of a cluster's days, or Infinity once a day's sessions are a Map. O(days). */
export function dayEntries(c: Cluster): number {
  let n = 0;
  for (const d of c.days) {
    work.steps++;
    if (sessionMap(d) !== null) return Infinity;
    n += (d.length - FIELDS) / 3;
  }
  return n;
}

/**
 * The sessions of a cluster without an index, derived from its days (at most SMALL_LIMIT (session, day) entries):
 * a session's count summed over its days and its latest signal the latest of them. Built per read, one step per
 * entry; each read after that costs at most one step per session.
 */
class DerivedSessions implements SeenReads {
  readonly isLarge = false;
  private readonly map = new Map<string, Seen>();

  /** `width`: 1 for times in epoch ms (a cluster's), HOUR_MS for hour numbers (an element's). */
  constructor(dayLists: readonly (readonly ClusterDay[])[], width: number) {
    for (const days of dayLists) {
      for (const d of days) {
        const start = dayOf(d) * DAY_MS;
        forEachDaySession(d, (sid, n, at) => {
          work.steps++;
          const t = width === 1 ? start + at : Math.floor((start + at) / width);
          const e = this.map.get(sid);
          if (e === undefined) this.map.set(sid, { t, n });
          else {
            e.n += n;
            e.t = Math.max(e.t, t);
          }
        });
      }
    }
  }

  get(id: string): Seen | undefined {
    const e = this.map.get(id);
    return e === undefined ? undefined : { t: e.t, n: e.n };
  }

  latest(id: string): number | undefined {
    return this.map.get(id)?.t;
  }

  countSince(cutoff: number, cap: number = Infinity): number {
    let n = 0;
    for (const e of this.map.values()) {
      work.steps++;
      if (e.t >= cutoff) n++;
    }
    return Math.min(n, cap);
  }

  forEach(fn: (id: string, t: number, n: number) => void): void {
    for (const [id, e] of this.map) {
      work.steps++;
      fn(id, e.t, e.n);
    }
  }
}

/** A cluster's sessions by latest signal with their counts: its index, or derived from its days while it has none. */
export function sessionsOf(c: Cluster): SeenReads {
  return c.index ?? new DerivedSessions([c.days], 1);
}

/** A new index over a cluster's sessions, when its days outgrow the derived form. O(SMALL_LIMIT²) once per cluster. */
export function buildIndex(c: Cluster): ClusterIndex {
  const index = new ClusterIndex(HOUR_MS);
  new DerivedSessions([c.days], 1).forEach((id, t, n) => index.observe(id, t, n));
  return index;
}

/** (session, day) entries of an element's clusters, or Infinity once one of them is past its derived form. */
export function elementEntries(el: ElementClusters): number {
  let n = 0;
  for (const c of el.clusters) n += c.index === null ? dayEntries(c) : Infinity;
  return n;
}

/** An element's distinct sessions by hour of latest signal: its index, or derived from its clusters' days. */
export function usersOf(el: ElementClusters): SeenReads | null {
  if (el.selector === '') return null;
  return (
    el.users ??
    new DerivedSessions(
      el.clusters.map((c) => c.days),
      HOUR_MS,
    )
  );
}

/** A new index over an element's sessions, when its clusters' days outgrow the derived form. Once per element. */
export function buildUsers(el: ElementClusters): LastSeenIndex {
  const users = new LatestIndex(1);
  new DerivedSessions(
    el.clusters.map((c) => c.days),
    HOUR_MS,
  ).forEach((id, t) => users.observe(id, t, 1));
  return users;
}
