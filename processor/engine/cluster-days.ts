import { isLater } from './cluster-model.ts';
import { work } from './last-seen.ts';
import { SMALL_LIMIT } from './small-collections.ts';

/** A cluster's day as one flat array, and merging a batch's day into it (cluster-state.ts has the design). */

/**
 * The fields a day of a cluster and a day of a patch share. Times are ms after the day's start (small integers).
 * NOTE: the day is a day number (epoch ms / DAY_MS), not its epoch ms: a Smi, where epoch ms would be a 16-byte
 * heap number per day held.
 */
export interface DayFields {
  readonly day: number;
  count: number;
  firstAt: number;
  lastAt: number;
  label: string | null;
  /** -1 when `label` is null. */
  labelAt: number;
  /** Latest raw selector ('' when the signals had none). */
  selector: string;
  /**
   * Always `lastAt`: every signal carries a selector ('' when none), so the latest one is that of the latest signal
   * (ties broken by value). Kept as a field for the merge's symmetry; a stored day does not hold it.
   */
  selectorAt: number;
}

/**
 * One UTC day of one cluster as one flat array: its fields in DayFields' order (day, count, firstAt, lastAt, label,
 * labelAt, selector; not selectorAt, which is lastAt), then per session `id, signals, latest signal (ms after the
 * day's start)`; past SMALL_LIMIT sessions the fields then one Map of [signals, latest]. One array where a record and
 * a session array cost 192 bytes for two sessions: 152. Read through `fieldsOf`, `dayOf` and `forEachDaySession`.
 */
export type ClusterDay = (string | number | null | Map<string, [number, number]>)[];

/** Slots of a day's fields before its sessions. */
export const FIELDS = 7;

export const dayOf = (d: ClusterDay): number => d[0] as number;

/** A day's fields as a record (a copy). */
function fieldsOf(d: ClusterDay): DayFields {
  return {
    day: d[0] as number,
    count: d[1] as number,
    firstAt: d[2] as number,
    lastAt: d[3] as number,
    label: d[4] as string | null,
    labelAt: d[5] as number,
    selector: d[6] as string,
    selectorAt: d[3] as number,
  };
}

/** The Map of a day past SMALL_LIMIT sessions, else null. */
export function sessionMap(d: ClusterDay): Map<string, [number, number]> | null {
  return d.length === FIELDS + 1 && d[FIELDS] instanceof Map ? (d[FIELDS] as Map<string, [number, number]>) : null;
}

/** Calls `fn` for every session of a day with its signals and latest signal (ms after the day's start). */
export function forEachDaySession(d: ClusterDay, fn: (sid: string, n: number, at: number) => void): void {
  const map = sessionMap(d);
  if (map !== null) {
    for (const [sid, [n, at]] of map) fn(sid, n, at);
    return;
  }
  for (let i = FIELDS; i < d.length; i += 3) fn(d[i] as string, d[i + 1] as number, d[i + 2] as number);
}

/** A new day with `dp`'s sessions merged into `d`'s (or a new day from `dp`), exact-size. */
export function mergedDay(d: ClusterDay | undefined, dp: DayPatch): ClusterDay {
  const f: DayFields =
    d === undefined
      ? {
          day: dp.day,
          count: 0,
          firstAt: dp.firstAt,
          lastAt: dp.lastAt,
          label: null,
          labelAt: -1,
          selector: dp.selector,
          selectorAt: dp.selectorAt,
        }
      : fieldsOf(d);
  mergeDayFields(f, dp);
  const out: ClusterDay = [f.day, f.count, f.firstAt, f.lastAt, f.label, f.labelAt, f.selector];
  let map = d === undefined ? null : sessionMap(d);
  if (map === null && d !== undefined) for (let i = FIELDS; i < d.length; i++) out.push(d[i] as string | number);
  for (const [sid, [n, at]] of dp.sessions) {
    work.steps++;
    if (map !== null) {
      const prev = map.get(sid);
      map.set(sid, prev === undefined ? [n, at] : [prev[0] + n, Math.max(prev[1], at)]);
      continue;
    }
    let i = FIELDS;
    while (i < out.length && out[i] !== sid) i += 3;
    if (i < out.length) {
      out[i + 1] = (out[i + 1] as number) + n;
      out[i + 2] = Math.max(out[i + 2] as number, at);
    } else if ((out.length - FIELDS) / 3 < SMALL_LIMIT) out.push(sid, n, at);
    else {
      map = new Map();
      for (let j = FIELDS; j < out.length; j += 3)
        map.set(out[j] as string, [out[j + 1] as number, out[j + 2] as number]);
      map.set(sid, [n, at]);
    }
  }
  if (map !== null) {
    out.length = FIELDS;
    out.push(map);
  }
  // NOTE: push leaves V8's growth slack; a copy is exact, and there can be a million days.
  return out.slice();
}

/** One day of one cluster in a batch. */
export interface DayPatch extends DayFields {
  /** Per session: [signals, latest signal ms after the day's start]. */
  readonly sessions: Map<string, [number, number]>;
}

/** Keeps the later of (ts, value) in a day's selector or label field. */
export function mergeDayFields(d: DayFields, from: DayFields): void {
  d.count += from.count;
  d.firstAt = Math.min(d.firstAt, from.firstAt);
  d.lastAt = Math.max(d.lastAt, from.lastAt);
  if (isLater({ ts: from.selectorAt, value: from.selector }, { ts: d.selectorAt, value: d.selector })) {
    d.selector = from.selector;
    d.selectorAt = from.selectorAt;
  }
  if (
    from.label !== null &&
    isLater({ ts: from.labelAt, value: from.label }, d.label === null ? null : { ts: d.labelAt, value: d.label })
  ) {
    d.label = from.label;
    d.labelAt = from.labelAt;
  }
}
