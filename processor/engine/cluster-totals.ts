import type { ClusterDay, DayPatch } from './cluster-days.ts';
import type { ClusterPatch } from './cluster-fold.ts';
import type { Cluster, Latest } from './cluster-model.ts';
import { work } from './last-seen.ts';
import { DAY_MS, clusterWindowStart } from './time.ts';

/** A cluster's day-level totals over a window: counts, first and last signal, latest selector and label. */

/** A cluster's day-level totals in the window at `now` (committed and staged days alike). */
interface Totals {
  readonly signalCount: number;
  readonly firstSignalAt: number;
  readonly lastSignalAt: number;
  readonly selector: Latest;
  readonly label: Latest | null;
  /** Whether a day before the window is still held (not evicted yet): session counts then include it. */
  readonly stale: boolean;
}

/** Whether (ts, value) is more recent than (heldTs, held): `isLater` on plain fields. */
const laterThan = (ts: number, value: string, heldTs: number, held: string | null): boolean =>
  held === null || ts > heldTs || (ts === heldTs && value > held);

/** Offsets of a WindowSum before any day is added: ints, so the fields stay Smis (Infinity would box them). */
const NO_FIRST = 2 ** 30;
const NO_TIME = -1;

/**
 * Day-level totals of the days of a window that starts on day `cutoffDay`: every field a sum, a minimum, a maximum
 * or a latest, so days add in any order and a batch's days add to the committed ones. Times are ms after the
 * window's start: small integers, held in the object itself, where epoch ms and {ts, value} records were five more
 * objects to fetch per cluster read (an element's read touches every signal type's).
 */
export class WindowSum {
  readonly cutoffDay: number;
  count = 0;
  firstAt = NO_FIRST;
  lastAt = NO_TIME;
  selector: string | null = null;
  selectorAt = NO_TIME;
  label: string | null = null;
  labelAt = NO_TIME;
  /** A day before the window was offered (held until the next eviction): its sessions are still in the indexes. */
  stale = false;

  constructor(cutoffDay: number) {
    this.cutoffDay = cutoffDay;
  }

  /** Adds one day (its times in ms after the day's start). */
  add(
    day: number,
    count: number,
    firstAt: number,
    lastAt: number,
    selector: string,
    selectorAt: number,
    label: string | null,
    labelAt: number,
  ): void {
    work.steps++;
    if (day < this.cutoffDay) {
      this.stale = true;
      return;
    }
    const base = (day - this.cutoffDay) * DAY_MS;
    this.count += count;
    this.firstAt = Math.min(this.firstAt, base + firstAt);
    this.lastAt = Math.max(this.lastAt, base + lastAt);
    if (laterThan(base + selectorAt, selector, this.selectorAt, this.selector)) {
      this.selector = selector;
      this.selectorAt = base + selectorAt;
    }
    if (label !== null && laterThan(base + labelAt, label, this.labelAt, this.label)) {
      this.label = label;
      this.labelAt = base + labelAt;
    }
  }

  /** Adds a stored day. */
  addStored(d: ClusterDay): void {
    // selectorAt is lastAt (DayFields).
    this.add(
      d[0] as number,
      d[1] as number,
      d[2] as number,
      d[3] as number,
      d[6] as string,
      d[3] as number,
      d[4] as string | null,
      d[5] as number,
    );
  }

  /** Adds a batch's day. */
  addPatch(d: DayPatch): void {
    this.add(d.day, d.count, d.firstAt, d.lastAt, d.selector, d.selectorAt, d.label, d.labelAt);
  }

  /** Adds every day of `o` (same window). */
  addSum(o: WindowSum): void {
    work.steps++;
    this.count += o.count;
    this.firstAt = Math.min(this.firstAt, o.firstAt);
    this.lastAt = Math.max(this.lastAt, o.lastAt);
    if (o.selector !== null && laterThan(o.selectorAt, o.selector, this.selectorAt, this.selector)) {
      this.selector = o.selector;
      this.selectorAt = o.selectorAt;
    }
    if (o.label !== null && laterThan(o.labelAt, o.label, this.labelAt, this.label)) {
      this.label = o.label;
      this.labelAt = o.labelAt;
    }
    this.stale ||= o.stale;
  }
}

/** The totals of a cluster's committed days in the window from `cutoffDay`: its index's kept sum when it has one. */
function committedSum(c: Cluster, cutoffDay: number): WindowSum {
  const index = c.index;
  const kept = index?.sum;
  if (kept != null && kept.cutoffDay === cutoffDay) return kept;
  const sum = new WindowSum(cutoffDay);
  for (const d of c.days) sum.addStored(d);
  // A stale sum is not kept: the next eviction drops the old day, and the sum would then be wrong.
  if (index !== null && !sum.stale) index.sum = sum;
  return sum;
}

export function totals(c: Cluster | undefined, p: ClusterPatch | undefined, now: number): Totals | null {
  const sum = new WindowSum(clusterWindowStart(now) / DAY_MS);
  if (c !== undefined) sum.addSum(committedSum(c, sum.cutoffDay));
  for (const d of p?.days.values() ?? []) sum.addPatch(d);
  if (sum.count === 0 || sum.selector === null) return null;
  const start = sum.cutoffDay * DAY_MS;
  return {
    signalCount: sum.count,
    firstSignalAt: start + sum.firstAt,
    lastSignalAt: start + sum.lastAt,
    selector: { ts: start + sum.selectorAt, value: sum.selector },
    label: sum.label === null ? null : { ts: start + sum.labelAt, value: sum.label },
    stale: sum.stale,
  };
}
