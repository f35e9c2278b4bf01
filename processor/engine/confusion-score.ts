import { signalWeight } from '../../shared/domain/signal-catalog.ts';
import { round1 } from '../../shared/domain/score-summary.ts';

// The summaries the API computes too (site score, trend, baseline) live in shared/domain; re-exported here so the
// engine has one import for scoring.
export { baselineScore, overallScore, round1, scoreTrend } from '../../shared/domain/score-summary.ts';

/**
 * The confusion score of a page over a window, the site's overall score, and the trend against the 7-day baseline.
 * Formulas and the reason for every constant: docs/scoring.md.
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

/** A page's score with what it is made of. */
export interface ConfusionScore {
  /** 0..100, one decimal; higher means more friction. */
  score: number;
  /** Signal type with the largest weighted contribution, or null when nothing weighs (no or only unknown signals). */
  dominantSignal: string | null;
  /** Raw weighted friction per session in the window (points/session, unrounded); 0 when the page had no sessions. */
  friction: number;
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
