import { SMALL_LIMIT } from './small-collections.ts';

/**
 * The hours of one page with counted events, in one flat array: per hour a record `hour, pageViews, k, type1, n1, …,
 * typek, nk` (its k signal types inline), or `hour, pageViews, -1, Map<type, n>` once the hour has more than
 * SMALL_LIMIT types (signal names are free-form, so an hour's types are not bounded). At most one record per hour,
 * order not significant. The hour is its number (epoch ms / HOUR_MS): a Smi, where epoch ms would be a 16-byte heap
 * number.
 *
 * Why: at 100k pages a record object per hour and a count array per hour with signals cost about 100 bytes a page
 * more than this one exact-size array. Records are replaced by copying the array (O(the page's slots): at most 25
 * hours of at most SMALL_LIMIT pairs each while the tick evicts), never grown in place, so no array keeps growth
 * slack.
 */
export type HourRecords = readonly (number | string | Map<string, number>)[];

export const NO_HOURS: HourRecords = Object.freeze([]);

/** Slots of the record at `i`. */
function recordLength(h: HourRecords, i: number): number {
  const k = h[i + 2] as number;
  return k < 0 ? 4 : 3 + 2 * k;
}

/** Calls `fn` for every signal type of the record at `i` with its count. */
function forEachSignalAt(h: HourRecords, i: number, fn: (type: string, n: number) => void): void {
  const k = h[i + 2] as number;
  if (k < 0) (h[i + 3] as Map<string, number>).forEach((n, type) => fn(type, n));
  else for (let j = i + 3; j < i + 3 + 2 * k; j += 2) fn(h[j] as string, h[j + 1] as number);
}

/** A record for `hour` with `views` and `signals` (at least one entry or none). */
function record(
  hour: number,
  views: number,
  signals: ReadonlyMap<string, number>,
): (number | string | Map<string, number>)[] {
  if (signals.size > SMALL_LIMIT) return [hour, views, -1, new Map(signals)];
  const out: (number | string)[] = [hour, views, signals.size];
  for (const [type, n] of signals) out.push(type, n);
  return out;
}

/** Number of hours held. */
export function hourCount(h: HourRecords): number {
  let n = 0;
  for (let i = 0; i < h.length; i += recordLength(h, i)) n++;
  return n;
}

/** Calls `fn` for every hour held with its views and a walk over its signal counts. */
export function forEachHour(
  h: HourRecords,
  fn: (hour: number, views: number, signals: (each: (type: string, n: number) => void) => void) => void,
): void {
  for (let i = 0; i < h.length; i += recordLength(h, i)) {
    const at = i;
    fn(h[i] as number, h[i + 1] as number, (each) => forEachSignalAt(h, at, each));
  }
}

/** `h` with `views` and `signals` added to hour `hour`: a new exact-size array (or `h` changed in place for views only). */
export function addToHour(
  h: HourRecords,
  hour: number,
  views: number,
  signals: ReadonlyMap<string, number>,
): HourRecords {
  let i = 0;
  while (i < h.length && h[i] !== hour) i += recordLength(h, i);
  if (i === h.length) return h.concat(record(hour, views, signals));
  const len = recordLength(h, i);
  if (signals.size === 0 || (h[i + 2] as number) < 0) {
    // In place: the array is the window's own (never the shared empty one, which has no record).
    const own = h as (number | string | Map<string, number>)[];
    own[i + 1] = (h[i + 1] as number) + views;
    if ((h[i + 2] as number) < 0) {
      const map = h[i + 3] as Map<string, number>;
      for (const [type, n] of signals) map.set(type, (map.get(type) ?? 0) + n);
    }
    return h;
  }
  const merged = new Map<string, number>();
  forEachSignalAt(h, i, (type, n) => merged.set(type, n));
  for (const [type, n] of signals) merged.set(type, (merged.get(type) ?? 0) + n);
  return h.slice(0, i).concat(record(hour, (h[i + 1] as number) + views, merged), h.slice(i + len));
}

/** Whether an hour before `cutoffHour` is held. */
export function holdsBefore(h: HourRecords, cutoffHour: number): boolean {
  for (let i = 0; i < h.length; i += recordLength(h, i)) if ((h[i] as number) < cutoffHour) return true;
  return false;
}

/** The records of hours from `cutoffHour` on, exact-size. */
export function hoursFrom(h: HourRecords, cutoffHour: number): HourRecords {
  let out: HourRecords = NO_HOURS;
  for (let i = 0; i < h.length; ) {
    const len = recordLength(h, i);
    if ((h[i] as number) >= cutoffHour) out = out.concat(h.slice(i, i + len));
    i += len;
  }
  return out;
}
