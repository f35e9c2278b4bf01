/**
 * Score summaries both the processor (page trends) and the API (site overview) compute. Pure functions;
 * the reasons for each constant are in docs/scoring.md.
 */

export type Trend = 'up' | 'down' | 'stable';

const DAY_MS = 86_400_000;
/** Trend: score points within which a change is noise. */
export const TREND_BAND_POINTS = 5;
/** Trend: fraction of the baseline within which a change is noise (wins over the points band above 50). */
export const TREND_BAND_RATIO = 0.1;
/** Daily scores before today that make the trend baseline. */
export const BASELINE_DAYS = 7;
/** Fewest daily scores in the baseline period for a baseline to exist; fewer and the trend is `stable`. */
export const BASELINE_MIN_DAYS = 3;

/** Rounds half away from zero to one decimal, the precision every score is served with. */
export function round1(x: number): number {
  return (Math.sign(x) * Math.round(Math.abs(x) * 10)) / 10;
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
export function scoreTrend(current: number, baseline: number | null): Trend {
  if (baseline === null) return 'stable';
  const delta = current - baseline;
  const band = trendBand(baseline);
  if (delta > band) return 'up';
  if (delta < -band) return 'down';
  return 'stable';
}

/** Epoch ms of 00:00 UTC on a `YYYY-MM-DD` date; NaN when the string is not such a date. */
export function utcDateStart(date: string): number {
  return /^\d{4}-\d{2}-\d{2}$/.test(date) ? Date.parse(`${date}T00:00:00.000Z`) : Number.NaN;
}

/**
 * The 7-day baseline: mean of the daily scores dated in the BASELINE_DAYS before `today` (today excluded, since it
 * is what is being compared), one decimal. Null when fewer than BASELINE_MIN_DAYS of them exist: a baseline made of
 * one or two days is itself noise. A date appearing twice counts once (its last entry wins).
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
