import type { ClusterDay } from './cluster-days.ts';
import type { EvidenceSession } from './cluster-evidence.ts';
import type { WindowSum } from './cluster-totals.ts';
import { LastSeenIndex } from './last-seen.ts';
import { SMALL_LIMIT } from './small-collections.ts';

/** The shape of the cluster state (cluster-state.ts has the whole design) and its lookups. */

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
export function elementsIn(els: PageElements | undefined): Iterable<ElementClusters> {
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

/** An empty state. */
export function createClusterState(): ClusterState {
  return { sites: new Map() };
}

/** A string form of a key, unique per key (NUL cannot occur in the parts). */
export function clusterKeyString(k: ClusterKey): string {
  return `${k.siteId}\u0000${k.page}\u0000${k.selector}\u0000${k.signalType}`;
}

export const elementKeyString = (siteId: string, page: string, selector: string): string =>
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

export function elementOf(state: ClusterState, siteId: string, page: string, selector: string): ElementClusters {
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
