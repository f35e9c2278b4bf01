import type { PageWindowStats } from './confusion-score.ts';
import { isSignalEvent, sharedSignalType, type EngineEvent } from './events.ts';
import { LatestIndex, type LastSeenIndex, work } from './last-seen.ts';
import {
  NO_HOURS,
  addToHour,
  forEachHour,
  holdsBefore,
  hourCount,
  hoursFrom,
  type HourRecords,
} from './hour-records.ts';
import { HOUR_MS, bucketStart, pageWindowStart } from './time.ts';
import { sortedRecord } from './util.ts';

/**
 * The per-page window state the processor keeps in memory, per (site, page): page views and signal counts per
 * hour, and the page's distinct sessions indexed by the hour of their latest visit (last-seen.ts). Reading a page at
 * `now` sums the hours of the last 24 h (time.ts `pageWindowStart`) and counts the sessions last seen in them, so the
 * result depends only on the events folded in and on `now`: never on order, batching, or when eviction ran.
 *
 * Cost: folding a batch costs O(its events); reading a page costs O(its signal types) from the sums it keeps for
 * the current window, and O(hours held) (at most 25 while the tick evicts) once per window, whatever the number of
 * sessions on the page. Nothing is copied per batch.
 *
 * Staging: `foldEvents` reads nothing and changes nothing: it condenses the batch into a patch per page. The
 * processor reads the staged stats (`readStagedPage`: committed state plus patch) to write scores in the batch's
 * transaction, and only after the commit applies the patch in place (`commitWindowUpdate`). A dropped patch is a
 * rollback. Applying re-derives every change from the patch, so an eviction that ran in between is harmless.
 * NOTE: events must already be deduplicated (the store's unique event id): counts are not idempotent.
 *
 * Memory per page: one object (about 112 bytes: the window is its own session index), its hours in one flat array
 * (hour-records.ts: 24 bytes an hour with traffic plus 16 per signal type in it), and per distinct session in the
 * window one index entry (24 bytes while the page has ≤ 16 sessions, a Map entry holding the hour number past that,
 * plus an 8-byte bucket slot per extra hour in which the same session comes back). Once read, a page also keeps its
 * window's sums (`sum`): about 240 bytes, an object and a Map of its signal types.
 */

/**
 * The window of one page. Mutated in place by commits and evictions only. It is its own session index (distinct
 * sessions by the hour number of their latest counted event): one object where a window and an index cost 32
 * bytes more a page.
 */
export class PageWindow extends LatestIndex {
  readonly siteId: string;
  readonly page: string;
  /** Its hours with counted events (hour-records.ts), replaced exact-size as they change. */
  hours: HourRecords = NO_HOURS;
  /**
   * Its views and signals summed over its hours from `sum.cutoffHour` on, kept current by commits (null until read,
   * and after an eviction): a page's read walked its 25 hours of up to seven signal types each for every batch,
   * and on a busy page that walk was the largest share of a small batch's time.
   */
  sum: HourSum | null = null;

  constructor(siteId: string, page: string) {
    super(1);
    this.siteId = siteId;
    this.page = page;
  }

  /** Distinct sessions by the hour number (epoch ms / HOUR_MS) of their latest counted event. */
  get sessions(): LastSeenIndex {
    return this;
  }

  /** Hours held. */
  get hourCount(): number {
    return hourCount(this.hours);
  }
}

/** A page's views and signals over its hours from `cutoffHour` on. */
interface HourSum {
  readonly cutoffHour: number;
  pageViews: number;
  readonly signals: Map<string, number>;
}

/** The committed views and signals of `w` from `cutoffHour` on: its kept sum, or summed from its hours and kept. */
function committedHours(w: PageWindow, cutoffHour: number): HourSum {
  if (w.sum !== null && w.sum.cutoffHour === cutoffHour) return w.sum;
  const sum: HourSum = { cutoffHour, pageViews: 0, signals: new Map() };
  forEachHour(w.hours, (hour, views, eachSignal) => {
    work.steps++;
    if (hour < cutoffHour) return;
    sum.pageViews += views;
    eachSignal((type, n) => sum.signals.set(type, (sum.signals.get(type) ?? 0) + n));
  });
  w.sum = sum;
  return sum;
}

/** All page windows, by site then page. */
export interface WindowState {
  readonly sites: Map<string, Map<string, PageWindow>>;
}

/** One batch's contribution to one page. */
export interface PagePatch {
  readonly siteId: string;
  readonly page: string;
  /** Views and signals per hour start. */
  readonly hours: Map<number, { pageViews: number; signals: Map<string, number> }>;
  /** Per session: its latest hour number in the batch. */
  readonly sessions: Map<string, number>;
}

/** The patches of one batch, one per touched page; commit it to make it current, drop it to roll back. */
export interface WindowUpdate {
  readonly pages: readonly PagePatch[];
}

/** A (site, page) reference. */
export interface PageRef {
  readonly siteId: string;
  readonly page: string;
}

/** An empty state. */
export function createWindowState(): WindowState {
  return { sites: new Map() };
}

/** The committed window of a page, or undefined. */
export function getPageWindow(state: WindowState, siteId: string, page: string): PageWindow | undefined {
  return state.sites.get(siteId)?.get(page);
}

const hourNumber = (ts: number): number => Math.floor(ts / HOUR_MS);

/**
 * Condenses a batch into one patch per page it touches; reads and changes no state, costs O(events).
 * Counted: `page_view` (a view and its session) and `signal` with a type (the signal and its session). Conversions
 * and custom events do not make a session "on the page" for scoring, so they are skipped.
 * Events older than the window are folded too (eviction drops them): that keeps the fold independent of time.
 */
export function foldEvents(_state: WindowState, events: readonly EngineEvent[]): WindowUpdate {
  const patches = new Map<string, PagePatch>();
  for (const e of events) {
    work.steps++;
    const isView = e.type === 'page_view';
    if (!isView && !isSignalEvent(e)) continue;
    const key = `${e.siteId}\u0000${e.page}`;
    let p = patches.get(key);
    if (p === undefined)
      patches.set(key, (p = { siteId: e.siteId, page: e.page, hours: new Map(), sessions: new Map() }));
    const start = bucketStart(e.ts, HOUR_MS);
    let h = p.hours.get(start);
    if (h === undefined) p.hours.set(start, (h = { pageViews: 0, signals: new Map() }));
    if (isView) h.pageViews += 1;
    else {
      const type = sharedSignalType(e.signal as string);
      h.signals.set(type, (h.signals.get(type) ?? 0) + 1);
    }
    const hour = hourNumber(e.ts);
    const prev = p.sessions.get(e.sessionId);
    if (prev === undefined || hour > prev) p.sessions.set(e.sessionId, hour);
  }
  return { pages: [...patches.values()] };
}

/** Applies the patches of `update` in place. O(the update's size). */
export function commitWindowUpdate(state: WindowState, update: WindowUpdate): void {
  for (const p of update.pages) {
    let pages = state.sites.get(p.siteId);
    if (pages === undefined) state.sites.set(p.siteId, (pages = new Map()));
    let w = pages.get(p.page);
    // The site id string shared with the site's other windows, not this message's copy (a message's decode gives
    // each message its own copy of a 36-character id: 56 bytes a page).
    if (w === undefined)
      pages.set(
        p.page,
        (w = new PageWindow((pages.values().next().value as PageWindow | undefined)?.siteId ?? p.siteId, p.page)),
      );
    const sum = w.sum;
    for (const [start, ph] of p.hours) {
      const hour = hourNumber(start);
      w.hours = addToHour(w.hours, hour, ph.pageViews, ph.signals);
      if (sum === null || hour < sum.cutoffHour) continue;
      sum.pageViews += ph.pageViews;
      for (const [type, n] of ph.signals) sum.signals.set(type, (sum.signals.get(type) ?? 0) + n);
    }
    for (const [sessionId, hour] of p.sessions) w.sessions.observe(sessionId, hour, 1);
  }
}

/** `foldEvents` then `commitWindowUpdate`, for callers with nothing to commit in between (rebuilds, tests). */
export function applyEvents(state: WindowState, events: readonly EngineEvent[]): WindowUpdate {
  const update = foldEvents(state, events);
  commitWindowUpdate(state, update);
  return update;
}

/**
 * Drops hours that have left the window at `now` (pages left empty are dropped too) and returns the pages that
 * lost hours. Reads already ignore old hours, so eviction only frees memory; but its result is the list of pages
 * whose stats changed because time passed with no new event: when it runs at least hourly, rescoring those pages
 * keeps every stored score current. Cost: O(pages) plus the sessions that left.
 */
export function evictWindows(state: WindowState, now: number): PageRef[] {
  const cutoffHour = hourNumber(pageWindowStart(now));
  const changed: PageRef[] = [];
  for (const [siteId, pages] of state.sites) {
    for (const [page, w] of pages) {
      if (!holdsBefore(w.hours, cutoffHour)) continue;
      changed.push({ siteId, page });
      const kept = hoursFrom(w.hours, cutoffHour);
      w.hours = kept;
      // A kept sum for an earlier cutoff holds hours that are now gone.
      w.sum = null;
      w.sessions.removeBefore(cutoffHour);
      if (kept.length === 0 && w.sessions.size === 0) pages.delete(page);
    }
    if (pages.size === 0) state.sites.delete(siteId);
  }
  return changed;
}

/** The stats of one page at `now`, with `patch` (a staged batch) laid over the committed window. O(hours + patch). */
function readWindow(window: PageWindow | undefined, patch: PagePatch | undefined, now: number): PageWindowStats {
  const cutoff = pageWindowStart(now);
  const cutoffHour = hourNumber(cutoff);
  const signals = new Map<string, number>();
  let pageViews = 0;
  let sessions = 0;
  if (window !== undefined) {
    const sum = committedHours(window, cutoffHour);
    pageViews = sum.pageViews;
    for (const [type, n] of sum.signals) signals.set(type, n);
    sessions = window.sessions.countSince(cutoffHour);
  }
  if (patch !== undefined) {
    for (const [start, h] of patch.hours) {
      work.steps++;
      if (start < cutoff) continue;
      pageViews += h.pageViews;
      for (const [type, n] of h.signals) signals.set(type, (signals.get(type) ?? 0) + n);
    }
    // A session of the batch adds one when it was not already in the window and now is.
    for (const [sessionId, hour] of patch.sessions) {
      work.steps++;
      if (hour < cutoffHour) continue;
      const prev = window?.sessions.latest(sessionId);
      if (prev === undefined || prev < cutoffHour) sessions++;
    }
  }
  return { sessions, pageViews, signals: sortedRecord(signals) };
}

/** The stats of one page window at `now`: its hours and sessions from `pageWindowStart(now)` on. */
export function readPageWindow(window: PageWindow | undefined, now: number): PageWindowStats {
  return readWindow(window, undefined, now);
}

/** The stats at `now` of a patched page as they will be once the patch is committed. */
export function readStagedPage(state: WindowState, patch: PagePatch, now: number): PageWindowStats {
  return readWindow(getPageWindow(state, patch.siteId, patch.page), patch, now);
}

/** The stats of a page at `now` (all zero when the engine has nothing for it). */
export function pageStats(state: WindowState, siteId: string, page: string, now: number): PageWindowStats {
  return readPageWindow(getPageWindow(state, siteId, page), now);
}

/** Distinct sessions of a page in the window at `now`: `pageStats(…).sessions` without summing its hours. */
export function pageSessionCount(state: WindowState, siteId: string, page: string, now: number): number {
  return getPageWindow(state, siteId, page)?.sessions.countSince(hourNumber(pageWindowStart(now))) ?? 0;
}

/**
 * Stats at `now` of every page of a site with activity in the window. O(pages of the site): meant for the periodic
 * site-mean refresh and rescoring, not for every batch.
 */
export function siteStats(state: WindowState, siteId: string, now: number): Map<string, PageWindowStats> {
  const out = new Map<string, PageWindowStats>();
  for (const [page, w] of state.sites.get(siteId) ?? []) {
    const stats = readPageWindow(w, now);
    if (stats.sessions > 0) out.set(page, stats);
  }
  return out;
}
