/**
 * The verify bench's traffic model, shared by its pure mode, its pipeline mode and the regression-catch test:
 * hourly Poisson page-sessions on the issue's page, affected sessions Poisson with an hourly Gamma rate factor and
 * occasional burst hours (rage-click storms), a before window and the fixed looks. Seeded, so a run is repeatable
 * and the pipeline mode can compare itself with the pure functions on the very same traffic.
 */
import { rng } from './workload.ts';
import { BEFORE_WINDOW_MS, LOOKS, checkRegression, dueLook, verifyIssue, type IssueCounts } from '../../shared/domain/deploy-verification.ts';

export const HOUR_MS = 3_600_000;
/** Page-sessions per hour on the issue's page. */
export const LEVELS = [50, 200, 500, 2000, 5000];
/** Share of page-sessions affected by an open issue before its fix. */
export const BASE_RATE = 0.03;
/** Residual rate of a fixed (resolved) issue in its quiet period: a real fix leaves a fifth. */
export const QUIET_RATE = BASE_RATE * 0.2;
/** How long before the deploy a closed issue was resolved (its quiet period, the regression test's before window). */
export const QUIET_HOURS = 72;
/** Hour-to-hour rate noise: Gamma(shape 4) with mean 1 (coefficient of variation 0.5)... */
export const GAMMA_SHAPE = 4;
/** ...and rage-click storms: this share of hours runs at BURST_FACTOR times the rate. */
export const BURST_SHARE = 0.03;
export const BURST_FACTOR = 4;

export const KINDS = [
  { id: 'real', name: 'real fix (-80%)', test: 'fix', before: BASE_RATE, after: BASE_RATE * 0.2 },
  { id: 'partial', name: 'partial fix (-30%)', test: 'fix', before: BASE_RATE, after: BASE_RATE * 0.7 },
  { id: 'noop', name: 'no-op', test: 'fix', before: BASE_RATE, after: BASE_RATE },
  { id: 'regression', name: 'regression (3x)', test: 'regression', before: QUIET_RATE, after: QUIET_RATE * 3 },
  { id: 'stays', name: 'stays fixed (no-op on a resolved issue)', test: 'regression', before: QUIET_RATE, after: QUIET_RATE },
] as const;
export type Kind = (typeof KINDS)[number];

/** The benches' seeded generator (mulberry32), so runs are repeatable; re-exported for the pipeline mode. */
export { rng };

function normal(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}

/** Poisson(λ): Knuth's product method below 30, a rounded normal above (the simulation's noise, not the test's). */
export function poisson(r: () => number, lambda: number): number {
  if (lambda <= 0) return 0;
  if (lambda < 30) {
    const l = Math.exp(-lambda);
    let k = 0;
    let p = 1;
    do {
      k++;
      p *= r();
    } while (p > l);
    return k - 1;
  }
  return Math.max(0, Math.round(lambda + Math.sqrt(lambda) * normal(r)));
}

/** Gamma(shape, 1/shape) for integer shape: mean 1. */
function gammaMeanOne(r: () => number, shape: number): number {
  let s = 0;
  for (let i = 0; i < shape; i++) s -= Math.log(1 - r());
  return s / shape;
}

/** The hour's rate multiplier: Gamma noise, times BURST_FACTOR in a burst hour. */
export function rateFactor(r: () => number): number {
  return gammaMeanOne(r, GAMMA_SHAPE) * (r() < BURST_SHARE ? BURST_FACTOR : 1);
}

/** Affected sessions among `sessions` in a slice at `rate` (at most one per session, as the test counts them). */
export function affectedIn(r: () => number, sessions: number, rate: number): number {
  return Math.min(sessions, poisson(r, sessions * rate * rateFactor(r)));
}

/** One slice of traffic (an hour, or `fraction` of one): page-sessions and affected sessions. */
export function slice(r: () => number, level: number, rate: number, fraction = 1): { sessions: number; affected: number } {
  const sessions = poisson(r, level * fraction);
  return { sessions, affected: affectedIn(r, sessions, rate) };
}

/**
 * The after window's slices, in ms after the deploy: up to each look, whole hours (the first look sees 5 minutes,
 * the 1 h look the 55 minutes after it). Shared so both modes cut time the same way.
 */
export function afterSlices(): { fromMs: number; toMs: number }[] {
  const out: { fromMs: number; toMs: number }[] = [];
  let at = 0;
  for (const look of LOOKS) {
    while (at < look.afterMs) {
      const to = Math.min(at + HOUR_MS, look.afterMs);
      out.push({ fromMs: at, toMs: to });
      at = to;
    }
  }
  return out;
}

export const beforeHours = (kind: Kind): number => (kind.test === 'fix' ? BEFORE_WINDOW_MS / HOUR_MS : QUIET_HOURS);

/** The decisive result of a kind's test: what "caught" means for it. */
export const decisiveResult = (kind: Kind): string => (kind.test === 'fix' ? 'verified' : 'regressed');

/** A look's result on cumulative counts, by the pure functions the processor calls. */
export function lookResult(kind: Kind, c: IssueCounts, alpha: number, elapsedMs: number): string {
  return kind.test === 'fix' ? verifyIssue(c, alpha, elapsedMs).result : checkRegression(c, alpha, elapsedMs).result;
}

export interface LookOutcome {
  look: string;
  result: string;
  counts: IssueCounts;
}

/**
 * Runs the looks over per-slice after counts (as afterSlices cuts them) given the before totals; the outcome at 24 h,
 * at the last look, the hour of the first decisive one, and each look taken. Once decisive, the issue's status
 * changed: later looks do not test it again.
 */
export function runLooks(kind: Kind, before: { sessions: number; affected: number }, after: readonly { sessions: number; affected: number }[]) {
  const slices = afterSlices();
  const done: string[] = [];
  const looks: LookOutcome[] = [];
  let sa = 0;
  let aa = 0;
  let i = 0;
  let at24h = 'none';
  let last = 'none';
  let decisiveAtH: number | null = null;
  const decisive = decisiveResult(kind);
  for (const look of LOOKS) {
    while (i < slices.length && slices[i].toMs <= look.afterMs) {
      sa += after[i].sessions;
      aa += after[i].affected;
      i++;
    }
    const due = dueLook(look.afterMs, done);
    if (!due) continue;
    done.push(due.name);
    // A decided issue changed status: the processor tests it no more for this deploy.
    if (last !== decisive) {
      const counts: IssueCounts = { sessionsBefore: before.sessions, affectedBefore: before.affected, sessionsAfter: sa, affectedAfter: aa };
      last = lookResult(kind, counts, due.alpha, look.afterMs);
      looks.push({ look: look.name, result: last, counts });
      if (last === decisive) decisiveAtH = look.afterMs / HOUR_MS;
    }
    if (look.name === '24h') at24h = last;
  }
  return { at24h, final: last, decisiveAtH, looks };
}

/** One simulated deploy for one issue of `kind` at `level` page-sessions per hour. */
export function simulate(r: () => number, kind: Kind, level: number) {
  let sessions = 0;
  let affected = 0;
  for (let h = 0; h < beforeHours(kind); h++) {
    const x = slice(r, level, kind.before);
    sessions += x.sessions;
    affected += x.affected;
  }
  const after = afterSlices().map((s) => slice(r, level, kind.after, (s.toMs - s.fromMs) / HOUR_MS));
  return runLooks(kind, { sessions, affected }, after);
}

/** Each (kind, level) cell of the bench draws from its own generator, so a cell's figures do not depend on the others. */
export const cellRng = (seed: number, kind: Kind, level: number): (() => number) => rng(seed * 1_000_003 + KINDS.indexOf(kind) * 100_003 + level);

/** Share of `n` simulated deploys of `kind` at `level` whose issue got its decisive result by the 24 h and by the last look. */
export function catchRate(seed: number, kind: Kind, level: number, n: number): { by24h: number; byLast: number } {
  const r = cellRng(seed, kind, level);
  let by24h = 0;
  let byLast = 0;
  const decisive = decisiveResult(kind);
  for (let i = 0; i < n; i++) {
    const s = simulate(r, kind, level);
    if (s.at24h === decisive) by24h++;
    if (s.final === decisive) byLast++;
  }
  return { by24h: by24h / n, byLast: byLast / n };
}
