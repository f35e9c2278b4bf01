import type { PageWindowStats } from './confusion-score.ts';
import { isSignalEvent, type EngineEvent } from './events.ts';
import { addOwned, compact, copyMap, copySet, getIn, setOwned, type OwnedMap, type OwnedSet, type SmallMap, type SmallSet } from './small-collections.ts';
import { HOUR_MS, bucketStart, pageWindowStart } from './time.ts';
import { sortedRecord } from './util.ts';

/**
 * The per-page window state the processor keeps in memory: hourly buckets per (site, page) holding the distinct
 * session ids, page views and signal counts by type seen in that hour. Reading a page at `now` sums the buckets of
 * the last 24 h (time.ts `pageWindowStart`), so the result depends only on the events folded in and on `now`: never
 * on the order or batching of the events, nor on when eviction ran.
 *
 * Updates are copy-on-write so the processor can fold a batch, commit the rows, and only then swap the new windows
 * in (STYLE.md "Stateful windows"): `foldEvents` never changes the state it is given; `commitWindowUpdate` does.
 * A fold copies only the buckets the batch touches (usually the current hour of each touched page).
 * NOTE: events must already be deduplicated (the store's unique event id): counts are not idempotent.
 */

/** One hour of one page. Never mutated once it is part of a committed state. */
export interface PageBucket {
  /** Bucket start, epoch ms, hour-aligned (UTC). */
  readonly start: number;
  /** Distinct session ids seen on the page in this hour. */
  readonly sessions: SmallSet;
  readonly pageViews: number;
  /** Signal counts by type. */
  readonly signals: SmallMap<number>;
}

/** The hour buckets of one page, at most one per start (order not significant). Replaced, never mutated, once committed. */
export interface PageWindow {
  readonly siteId: string;
  readonly page: string;
  readonly buckets: readonly PageBucket[];
}

/** All page windows, by site then page. */
export interface WindowState {
  readonly sites: Map<string, Map<string, PageWindow>>;
}

/**
 * New versions of the pages a batch touched; commit it to make them current, drop it to roll back. Before the
 * commit, `readPageWindow(update.pages[i], now)` gives the new stats of a touched page (the scores to write in the
 * same transaction).
 */
export interface WindowUpdate {
  readonly pages: readonly PageWindow[];
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

interface DraftBucket {
  start: number;
  sessions: OwnedSet;
  pageViews: number;
  signals: OwnedMap<number>;
}

interface DraftWindow {
  siteId: string;
  page: string;
  /** Committed buckets not touched by this fold. */
  kept: PageBucket[];
  /** Buckets copied by this fold, by start: safe to mutate. */
  owned: Map<number, DraftBucket>;
}

/** The committed window of a page, or undefined. */
export function getPageWindow(state: WindowState, siteId: string, page: string): PageWindow | undefined {
  return state.sites.get(siteId)?.get(page);
}

/**
 * Folds new events into copies of the windows they touch and returns those copies; `state` is not changed.
 * Counted: `page_view` (a view and its session) and `signal` with a type (the signal and its session). Conversions
 * and custom events do not make a session "on the page" for scoring, so they are skipped.
 * Events older than the window are folded too (eviction drops them): that keeps the fold independent of time.
 */
export function foldEvents(state: WindowState, events: readonly EngineEvent[]): WindowUpdate {
  const drafts = new Map<string, DraftWindow>();
  for (const e of events) {
    const isView = e.type === 'page_view';
    if (!isView && !isSignalEvent(e)) continue;
    const key = `${e.siteId}\u0000${e.page}`;
    let draft = drafts.get(key);
    if (draft === undefined) {
      const current = getPageWindow(state, e.siteId, e.page);
      draft = { siteId: e.siteId, page: e.page, kept: [...(current?.buckets ?? [])], owned: new Map() };
      drafts.set(key, draft);
    }
    const start = bucketStart(e.ts, HOUR_MS);
    let b = draft.owned.get(start);
    if (b === undefined) {
      // Copy on first touch: the committed bucket may still be read by the processor until the commit.
      const i = draft.kept.findIndex((k) => k.start === start);
      const committed = i < 0 ? undefined : draft.kept.splice(i, 1)[0];
      b = { start, sessions: copySet(committed?.sessions), pageViews: committed?.pageViews ?? 0, signals: copyMap(committed?.signals) };
      draft.owned.set(start, b);
    }
    b.sessions = addOwned(b.sessions, e.sessionId);
    if (isView) b.pageViews += 1;
    else b.signals = setOwned(b.signals, e.signal as string, (getIn(b.signals, e.signal as string) ?? 0) + 1);
  }
  return {
    pages: [...drafts.values()].map((d) => ({
      siteId: d.siteId,
      page: d.page,
      buckets: d.kept.concat([...d.owned.values()].map((b) => ({ ...b, sessions: compact(b.sessions), signals: compact(b.signals) }))).slice(),
    })),
  };
}

/** Makes the windows of `update` current. */
export function commitWindowUpdate(state: WindowState, update: WindowUpdate): void {
  for (const w of update.pages) {
    let pages = state.sites.get(w.siteId);
    if (pages === undefined) {
      pages = new Map();
      state.sites.set(w.siteId, pages);
    }
    pages.set(w.page, w);
  }
}

/** `foldEvents` then `commitWindowUpdate`, for callers with nothing to commit in between (rebuilds, tests). */
export function applyEvents(state: WindowState, events: readonly EngineEvent[]): WindowUpdate {
  const update = foldEvents(state, events);
  commitWindowUpdate(state, update);
  return update;
}

/**
 * Drops buckets that have left the window at `now` (pages left empty are dropped too) and returns the pages that
 * lost buckets. Reads already ignore old buckets, so eviction only frees memory; but its result is the list of
 * pages whose stats changed because time passed with no new event: when it runs at least hourly, rescoring those
 * pages keeps every stored score current.
 */
export function evictWindows(state: WindowState, now: number): PageRef[] {
  const cutoff = pageWindowStart(now);
  const changed: PageRef[] = [];
  for (const [siteId, pages] of state.sites) {
    for (const [page, w] of pages) {
      if (!w.buckets.some((b) => b.start < cutoff)) continue;
      changed.push({ siteId, page });
      const kept = w.buckets.filter((b) => b.start >= cutoff);
      if (kept.length === 0) pages.delete(page);
      else pages.set(page, { siteId, page, buckets: kept });
    }
    if (pages.size === 0) state.sites.delete(siteId);
  }
  return changed;
}

/** The stats of one page window at `now`: the sum of its buckets from `pageWindowStart(now)` on. */
export function readPageWindow(window: PageWindow | undefined, now: number): PageWindowStats {
  const cutoff = pageWindowStart(now);
  const sessions = new Set<string>();
  const signals = new Map<string, number>();
  let pageViews = 0;
  if (window !== undefined) {
    for (const b of window.buckets) {
      if (b.start < cutoff) continue;
      for (const s of b.sessions) sessions.add(s);
      pageViews += b.pageViews;
      for (const [type, n] of b.signals) signals.set(type, (signals.get(type) ?? 0) + n);
    }
  }
  return { sessions: sessions.size, pageViews, signals: sortedRecord(signals) };
}

/** The stats of a page at `now` (all zero when the engine has nothing for it). */
export function pageStats(state: WindowState, siteId: string, page: string, now: number): PageWindowStats {
  return readPageWindow(getPageWindow(state, siteId, page), now);
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
