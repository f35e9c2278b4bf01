import { mergeDayFields, type DayFields, type DayPatch } from './cluster-days.ts';
import { clusterKeyString, elementKeyString, type ClusterKey, type ClusterState } from './cluster-model.ts';
import { isSignalEvent, sharedSignalType, type EngineEvent } from './events.ts';
import { work, type Seen } from './last-seen.ts';
import { canonicalSelector } from './selectors.ts';
import { DAY_MS, HOUR_MS } from './time.ts';

/** A batch's signals condensed into patches, read and changed nothing (cluster-state.ts has the design). */

/** One batch's contribution to one cluster. */
export interface ClusterPatch {
  readonly key: ClusterKey;
  readonly days: Map<number, DayPatch>;
  /** Per session: its signals in the batch (n) and latest signal (t, epoch ms). */
  readonly sessions: Map<string, Seen>;
}

/** One batch's sessions on one element (every type), by the hour number (epoch ms / HOUR_MS) of their latest signal. */
export interface ElementPatch {
  readonly siteId: string;
  readonly page: string;
  readonly selector: string;
  readonly users: Map<string, number>;
}

/** The patches of one batch; commit it to make it current, drop it to roll back. */
export interface ClusterUpdate {
  readonly clusters: readonly ClusterPatch[];
  readonly elements: readonly ElementPatch[];
}

/** The cluster key of a signal event. */
export function clusterKeyOf(e: EngineEvent & { readonly signal: string }): ClusterKey {
  return {
    siteId: e.siteId,
    page: e.page,
    selector: canonicalSelector(e.selector),
    signalType: sharedSignalType(e.signal),
  };
}

/** Condenses a batch's signal events into one patch per cluster and element; reads no state, costs O(events). */
export function foldSignals(_state: ClusterState, events: readonly EngineEvent[]): ClusterUpdate {
  const clusters = new Map<string, ClusterPatch>();
  const elements = new Map<string, ElementPatch>();
  for (const e of events) {
    work.steps++;
    if (!isSignalEvent(e)) continue;
    const key = clusterKeyOf(e);
    const ks = clusterKeyString(key);
    let p = clusters.get(ks);
    if (p === undefined) clusters.set(ks, (p = { key, days: new Map(), sessions: new Map() }));
    const day = Math.floor(e.ts / DAY_MS);
    // NOTE: `| 0` makes the offset an int32, which V8 stores unboxed; a double would be a 16-byte heap number.
    const at = (e.ts - day * DAY_MS) | 0;
    // Most raw selectors are already canonical: keep the key's (memoized) string rather than the event's copy.
    const selector = e.selector === undefined ? '' : e.selector === key.selector ? key.selector : e.selector;
    const label = e.label?.trim() ?? '';
    const one: DayFields = {
      day,
      count: 1,
      firstAt: at,
      lastAt: at,
      label: label === '' ? null : label,
      labelAt: label === '' ? -1 : at,
      selector,
      selectorAt: at,
    };
    let d = p.days.get(day);
    if (d === undefined) p.days.set(day, (d = { ...one, sessions: new Map() }));
    else mergeDayFields(d, one);
    const ds = d.sessions.get(e.sessionId);
    if (ds === undefined) d.sessions.set(e.sessionId, [1, at]);
    else {
      ds[0] += 1;
      ds[1] = Math.max(ds[1], at);
    }
    const s = p.sessions.get(e.sessionId);
    if (s === undefined) p.sessions.set(e.sessionId, { n: 1, t: e.ts });
    else {
      s.n += 1;
      s.t = Math.max(s.t, e.ts);
    }
    if (key.selector !== '') {
      const ek = elementKeyString(key.siteId, key.page, key.selector);
      let ep = elements.get(ek);
      if (ep === undefined)
        elements.set(ek, (ep = { siteId: key.siteId, page: key.page, selector: key.selector, users: new Map() }));
      ep.users.set(e.sessionId, Math.max(ep.users.get(e.sessionId) ?? -Infinity, Math.floor(e.ts / HOUR_MS)));
    }
  }
  return { clusters: [...clusters.values()], elements: [...elements.values()] };
}
