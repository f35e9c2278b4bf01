import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { Environment } from '../../shared/domain/deploy-verification.ts';
import type { Logger } from '../../shared/logger.ts';
import { baselineScore, scoreTrend } from '../../shared/domain/score-summary.ts';
import { confusionScore, siteMeanFriction, type PageWindowStats } from '../engine/confusion-score.ts';
import type { EngineEvent } from '../engine/events.ts';
import { HOUR_MS, bucketStart, pageWindowStart, utcDate } from '../engine/time.ts';
import {
  type WindowState,
  applyEvents,
  commitWindowUpdate,
  createWindowState,
  evictWindows,
  foldEvents,
  getPageWindow,
  pageSessionCount,
  readPageWindow,
  readStagedPage,
  siteStats,
} from '../engine/windows.ts';
import { loadScoreHistory, loadWindowEvents, upsertPageScores, type PageScoreWrite } from '../store/scores.store.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** One page's stats at the time its score is written. */
interface PageToScore {
  readonly siteId: string;
  readonly page: string;
  readonly stats: PageWindowStats;
}

const EMPTY_STATS: PageWindowStats = { sessions: 0, pageViews: 0, signals: {} };

/** The site mean (the score prior) moves slowly; recomputing it over every page per batch would cost O(pages). */
const SITE_MEAN_TTL_MS = 60_000;

/**
 * Keeps every page's 24-hour window in memory (a cache of the stored events, rebuilt at start) and writes the
 * page's score for the current hour and day in the same transaction as the events that changed it.
 * A batch is staged, not applied: its stats are read as the committed windows plus the batch's patch, and the
 * patch is applied in place only after the commit, so a failed transaction leaves memory as it was. A batch costs
 * O(its events and the pages it touches), whatever the sessions already on those pages.
 * One keeper per environment: its windows, site means and history, and the rows it writes, are that environment's.
 */
export class ScoreKeeper {
  readonly environment: Environment;
  private readonly state = createWindowState();
  private readonly siteMeans = new Map<string, { value: number | null; at: number }>();
  private readonly history = new Map<
    string,
    { today: string; byPage: Map<string, { date: string; score: number }[]> }
  >();
  private readonly log: Logger;
  /** Pages emptied by eviction whose last (empty) score row no committed tick has written yet. */
  private readonly emptiedPending = new Map<string, { siteId: string; page: string }>();

  constructor(opts: { log: Logger; environment?: Environment }) {
    this.log = opts.log;
    this.environment = opts.environment ?? 'production';
  }

  /** Drops a site's windows (before rebuilding them from the database, after an erasure). */
  forgetSite(siteId: string): void {
    this.state.sites.delete(siteId);
    this.siteMeans.delete(siteId);
  }

  /** Rebuilds the windows of these sites from their stored events of this environment of the last 24 hours. */
  async rebuild(db: Db, siteIds: readonly string[], now: number): Promise<void> {
    await ScoreKeeper.rebuildAll(db, { [this.environment]: this }, siteIds, now);
  }

  /**
   * Rebuilds the keepers of several environments in one read of each site's window: every row goes to the keeper of
   * its environment (rows of an environment without a keeper are skipped).
   */
  static async rebuildAll(
    db: Db,
    keepers: Partial<Record<Environment, ScoreKeeper>>,
    siteIds: readonly string[],
    now: number,
  ): Promise<void> {
    const envs = Object.keys(keepers) as Environment[];
    const since = pageWindowStart(now);
    const counts = new Map<Environment, number>();
    for (const siteId of siteIds) {
      for await (const rows of loadWindowEvents(db, siteId, envs.length === 1 ? envs[0] : 'any', since)) {
        for (const environment of envs) {
          const mine = envs.length === 1 ? rows : rows.filter((r) => r.environment === environment);
          applyEvents(keepers[environment]!.state, mine);
          counts.set(environment, (counts.get(environment) ?? 0) + mine.length);
        }
      }
    }
    for (const environment of envs)
      keepers[environment]!.log.info(
        { environment, sites: siteIds.length, events: counts.get(environment) ?? 0 },
        'score windows rebuilt',
      );
  }

  /**
   * Folds a batch into copies of the touched windows and writes their scores in `trx`. `apply` makes the new
   * windows current (after the commit); `pageSessions` answers with the staged windows laid over the committed ones.
   */
  async stage(
    trx: Transaction<Database>,
    events: readonly EngineEvent[],
    now: number,
  ): Promise<{ apply: () => void; pageSessions: (siteId: string, page: string) => number }> {
    const update = foldEvents(this.state, events);
    const pages = update.pages.map((p) => ({
      siteId: p.siteId,
      page: p.page,
      stats: readStagedPage(this.state, p, now),
    }));
    await upsertPageScores(trx, this.environment, await this.scoreRows(trx, pages, now));
    const staged = new Map(pages.map((p) => [`${p.siteId}\u0000${p.page}`, p.stats.sessions]));
    return {
      apply: () => commitWindowUpdate(this.state, update),
      pageSessions: (siteId, page) =>
        staged.get(`${siteId}\u0000${page}`) ?? pageSessionCount(this.state, siteId, page, now),
    };
  }

  /** The committed windows, read-only: what a recomputation from the stored rows must equal (tests, checks). */
  get windows(): Readonly<WindowState> {
    return this.state;
  }

  /** Distinct sessions of a page in the committed 24 h window. */
  pageSessions(siteId: string, page: string, now: number): number {
    return pageSessionCount(this.state, siteId, page, now);
  }

  /**
   * Time passing: drops hours that left the 24-hour window, then rescores every page with the site's current
   * mean. Between ticks a batch rescores only the pages it touched, with a site mean up to a minute old; the tick
   * brings every stored score back to exactly what a recomputation from the raw rows gives. Run it at least hourly.
   */
  async tick(db: Db, now: number): Promise<{ pages: number; commit: () => void }> {
    // Eviction only frees memory (reads ignore hours that left the window); what must survive a failed tick is the
    // list of pages it emptied, which owe one last row: kept until a tick that wrote them committed.
    for (const r of evictWindows(this.state, now)) {
      if (getPageWindow(this.state, r.siteId, r.page) === undefined)
        this.emptiedPending.set(`${r.siteId}\u0000${r.page}`, r);
    }
    const emptied = [...this.emptiedPending.values()].filter(
      (r) => getPageWindow(this.state, r.siteId, r.page) === undefined,
    );
    // Pages whose whole window left: one last row with their now-empty window, so they stop showing old friction.
    await this.writeScores(
      db,
      emptied.map((r) => ({ siteId: r.siteId, page: r.page, stats: EMPTY_STATS })),
      now,
    );
    let n = emptied.length;
    for (const siteId of [...this.state.sites.keys()]) n += await this.rescoreSite(db, siteId, now);
    return { pages: n, commit: () => this.emptiedPending.clear() };
  }

  /** Rescores every page of a site held in memory, with a freshly computed site mean (tick, recompute). */
  async rescoreSite(db: Db, siteId: string, now: number): Promise<number> {
    this.siteMeans.delete(siteId);
    const windows = [...(this.state.sites.get(siteId)?.values() ?? [])].map((w) => ({
      siteId: w.siteId,
      page: w.page,
      stats: readPageWindow(w, now),
    }));
    await this.writeScores(db, windows, now);
    return windows.length;
  }

  /** Scores and writes pages in chunks, so a site with 100k pages is not one giant statement. */
  private async writeScores(db: Db, pages: readonly PageToScore[], now: number): Promise<void> {
    for (let i = 0; i < pages.length; i += 5000)
      await upsertPageScores(db, this.environment, await this.scoreRows(db, pages.slice(i, i + 5000), now));
  }

  private async scoreRows(db: Db, pages: readonly PageToScore[], now: number): Promise<PageScoreWrite[]> {
    const today = utcDate(now);
    await this.loadHistory(db, [...new Set(pages.map((w) => w.siteId))], today);
    return pages.map((w) =>
      pageScoreWrite(
        w.siteId,
        w.page,
        w.stats,
        this.siteMean(w.siteId, now),
        this.history.get(w.siteId)?.byPage.get(w.page) ?? [],
        now,
      ),
    );
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
    const rows = await loadScoreHistory(db, this.environment, missing, today);
    for (const s of missing) this.history.set(s, { today, byPage: new Map() });
    for (const r of rows) {
      const byPage = this.history.get(r.siteId)!.byPage;
      const list = byPage.get(r.page) ?? [];
      list.push({ date: r.date, score: r.score });
      byPage.set(r.page, list);
    }
  }
}

/**
 * A page's score row for the hour of `now`: its window stats scored with the site's mean friction as the prior, its
 * trend against its own history. The processor's rescore and `friction demo`'s set-based derive write the same row.
 */
export function pageScoreWrite(
  siteId: string,
  page: string,
  stats: PageWindowStats,
  siteMean: number | null,
  history: Parameters<typeof baselineScore>[0],
  now: number,
): PageScoreWrite {
  const today = utcDate(now);
  const s = confusionScore(stats, { siteMeanFriction: siteMean });
  return {
    siteId,
    page,
    windowStart: bucketStart(now, HOUR_MS),
    day: today,
    score: s.score,
    friction: s.friction,
    sessions: stats.sessions,
    pageViews: stats.pageViews,
    signalCount: Object.values(stats.signals).reduce((a, b) => a + b, 0),
    dominantSignal: s.dominantSignal,
    trend: scoreTrend(s.score, baselineScore(history, today)),
    updatedAt: now,
  };
}
