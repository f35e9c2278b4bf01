import { isSignalEvent, sharedSignalType, type EngineEvent } from './events.ts';
import { LastSeenIndex, LatestIndex, work, type Seen, type SeenReads } from './last-seen.ts';
import { canonicalSelector } from './selectors.ts';
import { SMALL_LIMIT } from './small-collections.ts';
import { DAY_MS, HOUR_MS, clusterWindowStart, pageWindowStart } from './time.ts';
import { compareStrings } from './util.ts';

/**
 * Incremental issue-cluster state: signals grouped by (site, page, canonical selector, signal type), in UTC-day
 * buckets over the last 7 days (time.ts `clusterWindowStart`). Each day keeps its signal count, first and last
 * signal, the latest label and raw selector, and per session its signal count (for eviction). Each cluster also
 * keeps its sessions indexed by the time of their latest signal (last-seen.ts) with their signal counts, and the
 * top EVIDENCE_SESSIONS of them. Each element (site, page, canonical selector) keeps its distinct sessions across
 * signal types the same way. That answers every issue and element field exactly (counts, distinct sessions,
 * evidence, first/last signal) for any `now`, whatever the order or batching of events.
 *
 * Cost: folding a batch costs O(its events); summarizing a touched cluster costs O(days + hour buckets held +
 * the batch's sessions of it), whatever the cluster's sessions. One exception, documented where it happens: a read
 * at a `now` for which the cluster still holds a day outside the window (between midnight UTC and the next tick's
 * eviction) ranks evidence by a scan of the cluster's sessions.
 *
 * Staging as in windows.ts: `foldSignals` condenses a batch into patches without reading or changing the state;
 * `ClusterReader` reads the committed state with the patches laid over it; `commitClusterUpdate` applies them in
 * place after the commit. Events must already be deduplicated by the store.
 *
 * Memory (Node's default build: 8-byte references): a cluster of two sessions on one day holds 200 bytes of
 * structure besides its strings: the cluster, which is its own key, 48 (its element holds site, page and selector;
 * one field holds its days, or its index, which then holds the days and the evidence top); its day, one flat array
 * held without a list while it is the only one, 152 (7 fields, the day a day number, not boxed epoch ms, then 24
 * bytes a session while it has at most SMALL_LIMIT); a further day adds its array and an exact-size list of days.
 * No session index while the days hold at most SMALL_LIMIT (session, day) entries (reads derive the sessions from
 * the days, one step per entry); past that the index adds a Map entry, a {t, n} record and bucket slots per session
 * (last-seen.ts). An element derives its sessions from its clusters' days likewise, and past SMALL_LIMIT entries
 * holds them once more, by hour number. A page's elements are an array while at most SMALL_LIMIT. Strings are
 * shared where a message's copy would be kept per object: catalogued signal types (events.ts `sharedSignalType`),
 * the site id and page of a page's elements, a canonical raw selector. docs/benchmarks.md, "Processor memory", has the measured totals.
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

/** One session's share of a cluster over a window (times absolute). */
export interface SessionDay {
  readonly count: number;
  /** Epoch ms of its latest signal. */
  readonly lastTs: number;
}

/**
 * The fields a day of a cluster and a day of a patch share. Times are ms after the day's start (small integers).
 * NOTE: the day is a day number (epoch ms / DAY_MS), not its epoch ms: a Smi, where epoch ms would be a 16-byte
 * heap number per day held.
 */
interface DayFields {
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
const FIELDS = 7;

const dayOf = (d: ClusterDay): number => d[0] as number;

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
function sessionMap(d: ClusterDay): Map<string, [number, number]> | null {
  return d.length === FIELDS + 1 && d[FIELDS] instanceof Map ? (d[FIELDS] as Map<string, [number, number]>) : null;
}

/** Calls `fn` for every session of a day with its signals and latest signal (ms after the day's start). */
function forEachDaySession(d: ClusterDay, fn: (sid: string, n: number, at: number) => void): void {
  const map = sessionMap(d);
  if (map !== null) {
    for (const [sid, [n, at]] of map) fn(sid, n, at);
    return;
  }
  for (let i = FIELDS; i < d.length; i += 3) fn(d[i] as string, d[i + 1] as number, d[i + 2] as number);
}

/** A new day with `dp`'s sessions merged into `d`'s (or a new day from `dp`), exact-size. */
function mergedDay(d: ClusterDay | undefined, dp: DayPatch): ClusterDay {
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

const NO_DAYS: readonly ClusterDay[] = Object.freeze([]);

/** A cluster's session index with its evidence top and window totals, kept together: most clusters have none of them. */
export class ClusterIndex extends LastSeenIndex {
  /**
   * The top EVIDENCE_SESSIONS session ids over the index (by `compareEvidence`) while it is large, else null; and
   * their signals and latest signal as `[n0, t0, n1, t1, …]` (a double array: one object, no boxed numbers). Exact:
   * a session's counts change only by a commit, which lays the sessions it touched over the top, or by an eviction,
   * which rebuilds it. Reads then look up only the batch's sessions in the index, and never read the top's ids
   * (`topWithBatch`): in a cluster of a million sessions each of those would be a cache miss.
   */
  topIds: readonly string[] | null = null;
  topCounts: readonly number[] = [];
  /**
   * The day-level totals of the days held, for the window that starts at `sum.cutoffDay`, kept current by commits:
   * a large cluster has a day per day of the week, and summing seven cold arrays per read (for every signal type of
   * an element) was a large share of a batch's time on a busy page. Null until read, and after an eviction.
   */
  sum: WindowSum | null = null;
  /** The cluster's days while it has this index (the cluster then holds the index alone: one field less per cluster). */
  days: readonly ClusterDay[] = NO_DAYS;
}

/** One cluster. Mutated in place by commits and evictions only. */
export class Cluster implements ClusterKey {
  /** Its element, which holds its site, page and canonical selector: three references less per cluster. */
  readonly element: ElementClusters;
  readonly signalType: string;
  /**
   * Its days and index in one field (a million clusters: 8 bytes each). Without an index: the day itself while
   * there is one (most clusters: one array less, 56 bytes), else an exact-size array of days, replaced when days
   * come or go. With an index: the index, which holds the days. Read and written through `days` and `index`.
   */
  private held: ClusterDay | readonly ClusterDay[] | ClusterIndex = NO_DAYS;

  constructor(element: ElementClusters, signalType: string) {
    this.element = element;
    this.signalType = signalType;
  }

  get siteId(): string {
    return this.element.siteId;
  }

  get page(): string {
    return this.element.page;
  }

  get selector(): string {
    return this.element.selector;
  }

  /** The top EVIDENCE_SESSIONS sessions (by `compareEvidence`, new rows) while the index is large; else null. */
  get top(): EvidenceSession[] | null {
    const ids = this.index?.topIds ?? null;
    if (ids === null) return null;
    const counts = (this.index as ClusterIndex).topCounts;
    return ids.map((sessionId, i) => ({
      sessionId,
      signals: counts[2 * i] as number,
      lastSignalAt: counts[2 * i + 1] as number,
    }));
  }

  set top(top: readonly EvidenceSession[] | null) {
    const index = this.index;
    if (index === null) return;
    index.topIds = top === null ? null : top.map((r) => r.sessionId);
    index.topCounts = top === null ? [] : top.flatMap((r) => [r.signals, r.lastSignalAt]);
  }

  /**
   * Sessions by their latest signal (epoch ms), with their signal counts over the days held; null while the days
   * hold at most SMALL_LIMIT (session, day) entries: reads then derive it from the days (`sessionsOf`), which
   * costs as many steps as scanning the index would, and saves its 170-odd bytes in most clusters.
   */
  get index(): ClusterIndex | null {
    return this.held instanceof ClusterIndex ? this.held : null;
  }

  set index(index: ClusterIndex | null) {
    const days = this.days;
    if (index === null) {
      this.held = NO_DAYS;
      this.days = days;
    } else {
      index.days = days;
      this.held = index;
    }
  }

  /** At most one per day, order not significant. */
  get days(): readonly ClusterDay[] {
    const held = this.held;
    if (held instanceof ClusterIndex) return held.days;
    // A day starts with its day number; a list of days holds arrays (or nothing).
    return typeof held[0] === 'number' ? [held as ClusterDay] : (held as readonly ClusterDay[]);
  }

  set days(days: readonly ClusterDay[]) {
    if (this.held instanceof ClusterIndex) this.held.days = days;
    else this.held = days.length === 1 ? (days[0] as ClusterDay) : days;
  }

  /** The cluster is its own key: one object less per cluster, and there can be a million clusters. */
  get key(): ClusterKey {
    return this;
  }
}

/** The clusters of one element (canonical selector; '' holds a page's page-level clusters). */
export interface ElementClusters {
  readonly siteId: string;
  readonly page: string;
  readonly selector: string;
  /** One per signal type. Replaced by an exact-size array when clusters come or go. */
  clusters: Cluster[];
  /**
   * Distinct sessions over every type, by the hour number of their latest signal (only whole-day windows are asked
   * of it, and an hour number is a Smi where epoch ms is a 16-byte heap number). Null for page-level signals (not an
   * element), and while its clusters' days hold at most SMALL_LIMIT (session, day) entries in all: reads then derive
   * it from them (`usersOf`), which saves the index (about 145 bytes) on most elements.
   */
  users: LastSeenIndex | null;
}

/**
 * A page's elements: an exact-size array while it has at most SMALL_LIMIT (found by their `selector`), a Map by
 * canonical selector past that. Most pages have a few elements, and a Map of two costs about 300 bytes against 64
 * for the array: at 100k pages, 23 MiB. Read and written through `findElement`, `elementsIn`, `withElement`.
 */
export type PageElements = readonly ElementClusters[] | Map<string, ElementClusters>;

/** Elements by site, then page, then canonical selector. */
export interface ClusterState {
  readonly sites: Map<string, Map<string, PageElements>>;
}

/** The element of a page with canonical selector `selector`, or undefined. O(SMALL_LIMIT) at most. */
function findElement(els: PageElements | undefined, selector: string): ElementClusters | undefined {
  if (els === undefined) return undefined;
  if (els instanceof Map) return els.get(selector);
  for (const el of els as readonly ElementClusters[]) if (el.selector === selector) return el;
  return undefined;
}

/** The elements of a page, in no significant order. */
function elementsIn(els: PageElements | undefined): Iterable<ElementClusters> {
  if (els === undefined) return [];
  return els instanceof Map ? els.values() : (els as readonly ElementClusters[]);
}

/** `els` with `el` (whose selector it does not hold) added: a new exact-size array, or the Map changed in place. */
function withElement(els: PageElements, el: ElementClusters): PageElements {
  if (els instanceof Map) return els.set(el.selector, el);
  const list = els as readonly ElementClusters[];
  if (list.length < SMALL_LIMIT) return list.concat(el);
  return new Map([...list, el].map((x) => [x.selector, x]));
}

/** One day of one cluster in a batch. */
export interface DayPatch extends DayFields {
  /** Per session: [signals, latest signal ms after the day's start]. */
  readonly sessions: Map<string, [number, number]>;
}

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

/** Evidence sessions kept on an issue: enough to replay a pattern, few enough to read. */
export const EVIDENCE_SESSIONS = 10;

/** An empty state. */
export function createClusterState(): ClusterState {
  return { sites: new Map() };
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

/** A string form of a key, unique per key (NUL cannot occur in the parts). */
export function clusterKeyString(k: ClusterKey): string {
  return `${k.siteId}\u0000${k.page}\u0000${k.selector}\u0000${k.signalType}`;
}

const elementKeyString = (siteId: string, page: string, selector: string): string =>
  `${siteId}\u0000${page}\u0000${selector}`;

/** Whether `a` is more recent than `b` by (ts, value); anything is more recent than null. */
export function isLater(a: Latest, b: Latest | null): boolean {
  return b === null || a.ts > b.ts || (a.ts === b.ts && a.value > b.value);
}

/** The committed clusters of an element, or undefined. */
export function getElement(
  state: ClusterState,
  siteId: string,
  page: string,
  selector: string,
): ElementClusters | undefined {
  return findElement(state.sites.get(siteId)?.get(page), selector);
}

/** The committed cluster for a key, or undefined. */
export function getCluster(state: ClusterState, key: ClusterKey): Cluster | undefined {
  return getElement(state, key.siteId, key.page, key.selector)?.clusters.find((c) => c.signalType === key.signalType);
}

/** All committed clusters of a site. */
export function siteClusters(state: ClusterState, siteId: string): Cluster[] {
  const out: Cluster[] = [];
  for (const els of state.sites.get(siteId)?.values() ?? []) for (const el of elementsIn(els)) out.push(...el.clusters);
  return out;
}

/** All committed elements (with a selector) of a site, optionally of one page, with their page. */
export function siteElements(
  state: ClusterState,
  siteId: string,
  page?: string,
): { page: string; element: ElementClusters }[] {
  const out: { page: string; element: ElementClusters }[] = [];
  const pages = state.sites.get(siteId);
  for (const [p, els] of pages ?? []) {
    if (page !== undefined && p !== page) continue;
    for (const el of elementsIn(els)) if (el.selector !== '') out.push({ page: p, element: el });
  }
  return out;
}

/** Keeps the later of (ts, value) in a day's selector or label field. */
function mergeDayFields(d: DayFields, from: DayFields): void {
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

function elementOf(state: ClusterState, siteId: string, page: string, selector: string): ElementClusters {
  let pages = state.sites.get(siteId);
  if (pages === undefined) state.sites.set(siteId, (pages = new Map()));
  const els = pages.get(page);
  let el = findElement(els, selector);
  if (el === undefined) {
    // Site id and page strings shared with the page's (or else the site's) elements, not the event's copies (one
    // per message, see events.ts `sharedSignalType`): a 36-character site id is 56 bytes an element.
    const sibling = elementsIn(els)[Symbol.iterator]().next().value as ElementClusters | undefined;
    const ofSite =
      sibling ??
      (elementsIn(pages.values().next().value)[Symbol.iterator]().next().value as ElementClusters | undefined);
    el = { siteId: ofSite?.siteId ?? siteId, page: sibling?.page ?? page, selector, clusters: [], users: null };
    pages.set(page, withElement(els ?? [], el));
  }
  return el;
}

/** Orders evidence: signals desc, latest signal desc, session id asc. */
function compareEvidence(a: EvidenceSession, b: EvidenceSession): number {
  return b.signals - a.signals || b.lastSignalAt - a.lastSignalAt || compareStrings(a.sessionId, b.sessionId);
}

/** The first EVIDENCE_SESSIONS of `rows` by `compareEvidence`. */
const topRows = (rows: Iterable<EvidenceSession>): EvidenceSession[] =>
  [...rows].sort(compareEvidence).slice(0, EVIDENCE_SESSIONS);

/** A batch's session laid over a large cluster: its committed signals and latest signal (or none), and the batch's. */
interface BatchSession {
  readonly id: string;
  readonly committed: Seen | undefined;
  readonly batch: Seen;
}

/**
 * A committed top (`rows`, exact) with a batch's sessions laid over it, ranked, the first `limit`: counts only grow,
 * so the new top is among the old and the batch's sessions. A batch session's old row can be in the top only with
 * its committed counts, so ids are compared only for rows whose counts match: the top's ids are not read.
 */
function topWithBatch(rows: EvidenceSession[], sessions: readonly BatchSession[], limit: number): EvidenceSession[] {
  for (const { id, committed, batch } of sessions) {
    work.steps++;
    if (committed !== undefined) {
      const k = rows.findIndex(
        (r) => r.signals === committed.n && r.lastSignalAt === committed.t && r.sessionId === id,
      );
      if (k >= 0) rows.splice(k, 1);
    }
    rows.push({
      sessionId: id,
      signals: (committed?.n ?? 0) + batch.n,
      lastSignalAt: Math.max(committed?.t ?? -Infinity, batch.t),
    });
  }
  return rows.sort(compareEvidence).slice(0, limit);
}

/** Recomputes a cluster's top from all its sessions: at the index's upgrade and after an eviction, never per batch. */
function rebuildTop(c: Cluster): void {
  if (c.index === null || !c.index.isLarge) {
    c.top = null;
    return;
  }
  const rows: EvidenceSession[] = [];
  c.index.forEach((sessionId, lastSignalAt, signals) => rows.push({ sessionId, signals, lastSignalAt }));
  c.top = topRows(rows);
}

/** (session, day) entries of a cluster's days, or Infinity once a day's sessions are a Map. O(days). */
function dayEntries(c: Cluster): number {
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
function sessionsOf(c: Cluster): SeenReads {
  return c.index ?? new DerivedSessions([c.days], 1);
}

/** A new index over a cluster's sessions, when its days outgrow the derived form. O(SMALL_LIMIT²) once per cluster. */
function buildIndex(c: Cluster): ClusterIndex {
  const index = new ClusterIndex(HOUR_MS);
  new DerivedSessions([c.days], 1).forEach((id, t, n) => index.observe(id, t, n));
  return index;
}

/** (session, day) entries of an element's clusters, or Infinity once one of them is past its derived form. */
function elementEntries(el: ElementClusters): number {
  let n = 0;
  for (const c of el.clusters) n += c.index === null ? dayEntries(c) : Infinity;
  return n;
}

/** An element's distinct sessions by hour of latest signal: its index, or derived from its clusters' days. */
function usersOf(el: ElementClusters): SeenReads | null {
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
function buildUsers(el: ElementClusters): LastSeenIndex {
  const users = new LatestIndex(1);
  new DerivedSessions(
    el.clusters.map((c) => c.days),
    HOUR_MS,
  ).forEach((id, t) => users.observe(id, t, 1));
  return users;
}

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

/** Top `limit` sessions by signals desc, then latest signal desc, then session id asc. */
export function topEvidence(
  sessions: ReadonlyMap<string, SessionDay>,
  limit: number = EVIDENCE_SESSIONS,
): EvidenceSession[] {
  return [...sessions]
    .map(([sessionId, s]) => ({ sessionId, signals: s.count, lastSignalAt: s.lastTs }))
    .sort(compareEvidence)
    .slice(0, limit);
}

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
class WindowSum {
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

function totals(c: Cluster | undefined, p: ClusterPatch | undefined, now: number): Totals | null {
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
