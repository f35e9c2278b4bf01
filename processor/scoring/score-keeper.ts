import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { Logger } from '../../shared/logger.ts';
import { baselineScore, scoreTrend } from '../../shared/domain/score-summary.ts';
import { confusionScore, siteMeanFriction } from '../engine/confusion-score.ts';
import type { EngineEvent } from '../engine/events.ts';
import { HOUR_MS, bucketStart, pageWindowStart, utcDate } from '../engine/time.ts';
import {
  applyEvents,
  commitWindowUpdate,
  createWindowState,
  evictWindows,
  foldEvents,
  getPageWindow,
  readPageWindow,
  siteStats,
  type PageWindow,
} from '../engine/windows.ts';
import type { FreshEventsSink } from '../events.consumer.ts';
import type { StoredEvent } from '../store/events.store.ts';
import { loadScoreHistory, loadWindowEvents, upsertPageScores, type PageScoreWrite } from '../store/scores.store.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** The site mean (the score prior) moves slowly; recomputing it over every page per batch would cost O(pages). */
const SITE_MEAN_TTL_MS = 60_000;

/**
 * Keeps every page's 24-hour window in memory (a cache of the stored events, rebuilt at start) and writes the
 * page's score for the current hour and day in the same transaction as the events that changed it.
 * Windows are copy-on-write: a failed transaction leaves memory as it was, and only a commit swaps the new
 * windows in.
 */
export class ScoreKeeper implements FreshEventsSink {
  private readonly state = createWindowState();
  private readonly siteMeans = new Map<string, { value: number | null; at: number }>();
  private readonly history = new Map<string, { today: string; byPage: Map<string, { date: string; score: number }[]> }>();
  private readonly now: () => number;
  private readonly log: Logger;

  constructor(opts: { now?: () => number; log: Logger }) {
    this.now = opts.now ?? Date.now;
    this.log = opts.log;
  }

  /** Rebuilds the windows of these sites from the stored events of the last 24 hours. */
  async rebuild(db: Db, siteIds: readonly string[]): Promise<void> {
    const since = pageWindowStart(this.now());
    let events = 0;
    for (const siteId of siteIds) {
      const rows = await loadWindowEvents(db, siteId, since);
      applyEvents(this.state, rows);
      events += rows.length;
    }
    this.log.info({ sites: siteIds.length, events }, 'score windows rebuilt');
  }

  async write(trx: Transaction<Database>, fresh: readonly StoredEvent[]): Promise<() => void> {
    const events: EngineEvent[] = fresh.map((e) => ({
      id: e.id,
      siteId: e.siteId,
      sessionId: e.sessionId,
      type: e.type as EngineEvent['type'],
      ts: e.ts,
      page: e.page,
      signal: e.signal ?? undefined,
      selector: e.selector ?? undefined,
      label: e.label ?? undefined,
    }));
    const update = foldEvents(this.state, events);
    await upsertPageScores(trx, await this.scoreRows(trx, update.pages, this.now()));
    return () => commitWindowUpdate(this.state, update);
  }

  /**
   * Drops hours that left the 24-hour window and rescores the pages that lost them, so a page whose traffic
   * stopped does not keep yesterday's score. Run it at least hourly.
   */
  async tick(db: Kysely<Database>): Promise<number> {
    const now = this.now();
    const changed = evictWindows(this.state, now);
    if (changed.length === 0) return 0;
    const windows: PageWindow[] = changed.map((r) => getPageWindow(this.state, r.siteId, r.page) ?? { siteId: r.siteId, page: r.page, buckets: [] });
    await upsertPageScores(db, await this.scoreRows(db, windows, now));
    return changed.length;
  }

  private async scoreRows(db: Db, windows: readonly PageWindow[], now: number): Promise<PageScoreWrite[]> {
    const today = utcDate(now);
    await this.loadHistory(db, [...new Set(windows.map((w) => w.siteId))], today);
    return windows.map((w) => {
      const stats = readPageWindow(w, now);
      const s = confusionScore(stats, { siteMeanFriction: this.siteMean(w.siteId, now) });
      const baseline = baselineScore(this.history.get(w.siteId)?.byPage.get(w.page) ?? [], today);
      return {
        siteId: w.siteId,
        page: w.page,
        windowStart: bucketStart(now, HOUR_MS),
        day: today,
        score: s.score,
        friction: s.friction,
        sessions: stats.sessions,
        pageViews: stats.pageViews,
        signalCount: Object.values(stats.signals).reduce((a, b) => a + b, 0),
        dominantSignal: s.dominantSignal,
        trend: scoreTrend(s.score, baseline),
        updatedAt: now,
      };
    });
  }

  private siteMean(siteId: string, now: number): number | null {
    const hit = this.siteMeans.get(siteId);
    if (hit && now - hit.at < SITE_MEAN_TTL_MS) return hit.value;
    const value = siteMeanFriction([...siteStats(this.state, siteId, now).values()]);
    this.siteMeans.set(siteId, { value, at: now });
    return value;
  }

  /** Daily history before today changes only at midnight: loaded once per site per day. */
  private async loadHistory(db: Db, siteIds: readonly string[], today: string): Promise<void> {
    const missing = siteIds.filter((s) => this.history.get(s)?.today !== today);
    if (missing.length === 0) return;
    const rows = await loadScoreHistory(db, missing, today);
    for (const s of missing) this.history.set(s, { today, byPage: new Map() });
    for (const r of rows) {
      const byPage = this.history.get(r.siteId)!.byPage;
      const list = byPage.get(r.page) ?? [];
      list.push({ date: r.date, score: r.score });
      byPage.set(r.page, list);
    }
  }
}
