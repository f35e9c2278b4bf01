import { signalWeight } from './catalog.ts';
import { DAY_MS, utcDateStart } from './time.ts';

/**
 * The confusion score of a page over a window, the site's overall score, and the trend against the 7-day baseline.
 * Formulas and the reason for every constant: SCORING.md.
 */

/** What the score reads of one page over one window (the processor keeps it in windows.ts). */
export interface PageWindowStats {
  /** Distinct sessions that viewed or signalled on the page in the window. */
  sessions: number;
  /** `page_view` events on the page in the window. */
  pageViews: number;
  /** Signal events on the page in the window, counted by signal type (unknown types included; they weigh 0). */
  signals: Readonly<Record<string, number>>;
}

/** Weighted friction per session (points/session) at which the score reaches 63.2 (= 100·(1 − 1/e)). */
export const FRICTION_SCALE = 5;
/** Pseudo-sessions of prior evidence a page score starts from: below ~20 sessions the prior dominates. */
export const PRIOR_SESSIONS = 20;
/** Pseudo-sessions of global prior the site mean starts from, so a brand-new site does not shrink toward itself. */
export const SITE_PRIOR_SESSIONS = 50;
/** Friction (points/session) assumed when nothing is known: one dead click in every ten sessions, a quiet page. */
export const GLOBAL_PRIOR_FRICTION = 0.5;
/** Trend: score points within which a change is noise. */
export const TREND_BAND_POINTS = 5;
/** Trend: fraction of the baseline within which a change is noise (wins over the points band above 50). */
export const TREND_BAND_RATIO = 0.1;
/** Daily scores before today that make the trend baseline. */
export const BASELINE_DAYS = 7;
/** Fewest daily scores in the baseline period for a baseline to exist; fewer and the trend is `stable`. */
export const BASELINE_MIN_DAYS = 3;

/** A page's score with what it is made of. */
export interface ConfusionScore {
  /** 0..100, one decimal; higher means more friction. */
  score: number;
  /** Signal type with the largest weighted contribution, or null when nothing weighs (no or only unknown signals). */
  dominantSignal: string | null;
  /** Raw weighted friction per session in the window (points/session, unrounded); 0 when the page had no sessions. */
  friction: number;
}

/** Rounds half away from zero to one decimal, the precision every score is served with. */
export function round1(x: number): number {
  return Math.sign(x) * Math.round(Math.abs(x) * 10) / 10;
}

/** Total friction points of a signal-count map: Σ weight(type) × count. An integer (weights are integers). */
export function weightedSignals(signals: Readonly<Record<string, number>>): number {
  let total = 0;
  for (const [type, count] of Object.entries(signals)) total += signalWeight(type) * count;
  return total;
}

/**
 * The signal type contributing most points (weight × count). Ties go to the heavier type, then the name, so the
 * answer never depends on map order. Null when nothing weighs.
 */
export function dominantSignal(signals: Readonly<Record<string, number>>): string | null {
  let best: { type: string; points: number; weight: number } | null = null;
  for (const [type, count] of Object.entries(signals)) {
    const weight = signalWeight(type);
    const points = weight * count;
    if (points <= 0) continue;
    if (
      best === null ||
      points > best.points ||
      (points === best.points && (weight > best.weight || (weight === best.weight && type < best.type)))
    ) {
      best = { type, points, weight };
    }
  }
  return best?.type ?? null;
}

/** Maps friction (points/session, ≥ 0) to 0..100 with saturation: 100 · (1 − e^(−friction / FRICTION_SCALE)). */
export function frictionToScore(friction: number): number {
  return round1(100 * (1 - Math.exp(-Math.max(0, friction) / FRICTION_SCALE)));
}

/**
 * Confusion score of one page over a window.
 *
 * friction = W / sessions, where W = Σ weight × count (points); shrunk = (W + PRIOR_SESSIONS × prior) /
 * (sessions + PRIOR_SESSIONS), prior being the site mean (or GLOBAL_PRIOR_FRICTION when it is null);
 * score = 100 · (1 − e^(−shrunk / FRICTION_SCALE)). Dividing by sessions makes volume alone neutral; the shrinkage
 * keeps one session with one rage click near the site's level instead of near 100.
 * A page with no sessions scores at its prior: with no evidence it is presumed like the site's average page.
 */
export function confusionScore(stats: PageWindowStats, prior: { siteMeanFriction: number | null }): ConfusionScore {
  const points = weightedSignals(stats.signals);
  const sessions = Math.max(0, stats.sessions);
  const priorFriction = prior.siteMeanFriction ?? GLOBAL_PRIOR_FRICTION;
  const shrunk = (points + PRIOR_SESSIONS * priorFriction) / (sessions + PRIOR_SESSIONS);
  return {
    score: frictionToScore(shrunk),
    dominantSignal: dominantSignal(stats.signals),
    friction: sessions > 0 ? points / sessions : 0,
  };
}

/**
 * The site's mean friction (points/session), the prior of its page scores: pooled over pages (Σ W / Σ sessions,
 * so busy pages count for their traffic) and itself shrunk toward GLOBAL_PRIOR_FRICTION with SITE_PRIOR_SESSIONS.
 * Null when no page had a session (the caller then falls back to the global prior).
 * NOTE: a session that visits two pages counts once per page: the mean is per page-session, like the page rates.
 */
export function siteMeanFriction(pages: readonly PageWindowStats[]): number | null {
  let points = 0;
  let sessions = 0;
  for (const p of pages) {
    points += weightedSignals(p.signals);
    sessions += Math.max(0, p.sessions);
  }
  if (sessions === 0) return null;
  return (points + SITE_PRIOR_SESSIONS * GLOBAL_PRIOR_FRICTION) / (sessions + SITE_PRIOR_SESSIONS);
}

/**
 * The site's overall score: page scores averaged with their sessions as weights, one decimal.
 * 0 when there are no pages or no page had a session (no traffic, no measured friction).
 */
export function overallScore(pages: readonly { score: number; sessions: number }[]): number {
  let weighted = 0;
  let sessions = 0;
  for (const p of pages) {
    if (p.sessions <= 0) continue;
    weighted += p.score * p.sessions;
    sessions += p.sessions;
  }
  return sessions === 0 ? 0 : round1(weighted / sessions);
}

/** Half-width of the noise band around a baseline, in score points: max(5, 10 % of the baseline). */
export function trendBand(baseline: number): number {
  return Math.max(TREND_BAND_POINTS, TREND_BAND_RATIO * baseline);
}

/**
 * Direction of the current score against the baseline: `up` (more friction) when it exceeds the baseline by more
 * than the band, `down` when it is lower by more than the band, otherwise `stable`; `stable` without a baseline.
 */
export function scoreTrend(current: number, baseline: number | null): 'up' | 'down' | 'stable' {
  if (baseline === null) return 'stable';
  const delta = current - baseline;
  const band = trendBand(baseline);
  if (delta > band) return 'up';
  if (delta < -band) return 'down';
  return 'stable';
}

/**
 * The 7-day baseline: mean of the daily scores dated in the BASELINE_DAYS before `today` (today excluded, since it
 * is what is being compared), one decimal. Null when fewer than BASELINE_MIN_DAYS of them exist: a baseline made of
 * one or two days is itself noise. A date appearing twice counts once (its last entry wins).
 * @param history daily scores, `date` as `YYYY-MM-DD` (UTC)
 * @param today `YYYY-MM-DD` (UTC) of the current score
 */
export function baselineScore(history: readonly { date: string; score: number }[], today: string): number | null {
  const end = utcDateStart(today);
  if (Number.isNaN(end)) return null;
  const start = end - BASELINE_DAYS * DAY_MS;
  const byDate = new Map<string, number>();
  for (const h of history) {
    const t = utcDateStart(h.date);
    if (t >= start && t < end) byDate.set(h.date, h.score);
  }
  if (byDate.size < BASELINE_MIN_DAYS) return null;
  let sum = 0;
  for (const s of byDate.values()) sum += s;
  return round1(sum / byDate.size);
}
