/**
 * The verify bench's traffic model, shared by its pure mode, its pipeline mode and the regression-catch test.
 *
 * One page, hour by hour around a deploy placed at a random hour of the week: page-sessions Poisson around the
 * level × a day/night cycle (0.4× at 03:00 to 1.6× at 15:00) × a weekly cycle (weekends at 0.7×, weekdays 1.12×);
 * each issue's affected sessions Poisson with the issue's rate × an hourly factor: Gamma(4) noise (mean 1,
 * coefficient of variation 0.5) × a ±30 % diurnal swing of the friction rate itself × 4 in burst hours (3 % of
 * hours: rage-click storms). Every slice of an hour shares its hour's factor (the looks cut the first hour into
 * 10, 5 and 45 minutes). Seeded, so a run is repeatable and the pipeline mode can compare itself with the pure
 * functions on the very same counts.
 */
import { rng } from './workload.ts';
import { poisson as drawPoisson } from '../../shared/seeded-random.ts';
import {
  BEFORE_WINDOW_MS,
  LOOKS,
  beforeModel,
  dispersionOf,
  dueLook,
  floorDispersion,
  fixPValue,
  fixResult,
  holm,
  regressionPValue,
  regressionResult,
  type BeforeModel,
  type Bucket,
  type Diurnal,
  type IssueCounts,
} from '../../shared/domain/deploy-verification.ts';

export const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
/** Page-sessions per hour on the issue's page (the daily and weekly mean). */
export const LEVELS = [50, 200, 500, 2000, 5000];
/** Share of page-sessions affected by an open issue before its fix. */
export const BASE_RATE = 0.03;
/** Residual rate of a fixed (resolved) issue in its quiet period: a real fix leaves a fifth. */
export const QUIET_RATE = BASE_RATE * 0.2;
/** How long before the deploy a closed issue was resolved (its quiet period, the regression test's before window). */
export const QUIET_HOURS = 72;
/**
 * Hour-to-hour rate noise beyond the cycles and storms, as a coefficient of variation (Gamma noise with mean 1): none
 * by default (the issue's traffic: cycles and bursts); `--hour-noise 0.5` is the harsher model of earlier benches.
 */
export const HOUR_NOISE_CV = 0;
/** Rage-click storms: this share of hours runs at BURST_FACTOR times the rate. */
export const BURST_SHARE = 0.03;
export const BURST_FACTOR = 4;
/** Day/night amplitude of the exposure, and the diurnal swing of the friction rate itself. */
export const DIURNAL_EXPOSURE = 0.6;
export const DIURNAL_RATE = 0.3;
/** Weekend days carry this share of a weekday's mean traffic... (weekdays 1.12×, so the week's mean is the level). */
export const WEEKEND = 0.7;
/** The storm that opened the 'burst' kind's issue: the before window's last hours at this multiple. */
export const STORM_HOURS = 8;
export const STORM_FACTOR = 5;
export const BEFORE_HOURS = BEFORE_WINDOW_MS / HOUR_MS;

export const KINDS = [
  { id: 'real', name: 'real fix (-80%)', test: 'fix', before: BASE_RATE, after: BASE_RATE * 0.2 },
  { id: 'partial', name: 'partial fix (-30%)', test: 'fix', before: BASE_RATE, after: BASE_RATE * 0.7 },
  { id: 'noop', name: 'no-op', test: 'fix', before: BASE_RATE, after: BASE_RATE },
  { id: 'burst', name: 'no-op, issue opened by a storm', test: 'fix', before: BASE_RATE, after: BASE_RATE },
  { id: 'regression', name: 'regression (3x)', test: 'regression', before: QUIET_RATE, after: QUIET_RATE * 3 },
  {
    id: 'stays',
    name: 'stays fixed (no-op on a resolved issue)',
    test: 'regression',
    before: QUIET_RATE,
    after: QUIET_RATE,
  },
] as const;
export type Kind = (typeof KINDS)[number];

/** The benches' seeded generator (mulberry32), so runs are repeatable; re-exported for the pipeline mode. */
export { rng };

/**
 * Poisson(λ) as the README's figures were drawn: Knuth's method below 30, the rounded normal from 30 on. λ = 30 does
 * happen (1,000 sessions × 3 %), and which method takes it changes every later draw of the seeded stream; the largest
 * double below 30 as the shared function's Knuth bound makes 30 itself normal.
 */
const poisson = (r: () => number, lambda: number) => drawPoisson(r, lambda, 30 - 2 ** -48);

/** Gamma(shape, 1/shape) for integer shape: mean 1 (shape 0: no noise). */
function gammaMeanOne(r: () => number, shape: number): number {
  if (shape === 0) return 1;
  let s = 0;
  for (let i = 0; i < shape; i++) s -= Math.log(1 - r());
  return s / shape;
}

const hourOfDay = (hourOfWeek: number) => ((hourOfWeek % 24) + 24) % 24;
const dayOfWeek = (hourOfWeek: number) => Math.floor((((hourOfWeek % 168) + 168) % 168) / 24);

/** Expected page-sessions in hour `hourOfWeek` (0 = Monday 00:00) at `level`: the day/night and weekly cycles. */
export function exposure(level: number, hourOfWeek: number): number {
  const day = 1 + DIURNAL_EXPOSURE * Math.sin((2 * Math.PI * (hourOfDay(hourOfWeek) - 9)) / 24);
  const week = dayOfWeek(hourOfWeek) >= 5 ? WEEKEND : (7 - 2 * WEEKEND) / 5;
  return level * day * week;
}

/** The diurnal swing of the friction rate in hour `hourOfWeek`. */
const diurnalSwing = (hourOfWeek: number) =>
  1 + DIURNAL_RATE * Math.sin((2 * Math.PI * (hourOfDay(hourOfWeek) - 12)) / 24);

/**
 * The hour's rate multiplier: Gamma noise of coefficient of variation `noiseCv` × the diurnal swing of the rate ×
 * BURST_FACTOR in a burst hour.
 */
export function rateFactor(r: () => number, hourOfWeek: number, noiseCv = HOUR_NOISE_CV): number {
  const swing = diurnalSwing(hourOfWeek);
  const shape = noiseCv > 0 ? Math.max(1, Math.round(1 / (noiseCv * noiseCv))) : 0;
  return gammaMeanOne(r, shape) * swing * (r() < BURST_SHARE ? BURST_FACTOR : 1);
}

/**
 * When each look is taken, in ms after the deploy (the processor's 5-minute ticks): the first look is due at 5
 * minutes but taken only once the after traffic spans 5 minutes, at the 10-minute tick; the others on time.
 */
export const LOOK_TICKS: readonly { name: string; afterMs: number; tickMs: number }[] = LOOKS.map((l) => ({
  name: l.name,
  afterMs: l.afterMs,
  tickMs: l.name === 'initial' ? 10 * MINUTE_MS : l.afterMs,
}));

/** The after window's slices in ms after the deploy, each inside one hour: up to each look's tick, then whole hours. */
export function afterSlices(): { fromMs: number; toMs: number; hour: number }[] {
  const out: { fromMs: number; toMs: number; hour: number }[] = [];
  let at = 0;
  for (const look of LOOK_TICKS) {
    while (at < look.tickMs) {
      const to = Math.min(Math.floor(at / HOUR_MS) * HOUR_MS + HOUR_MS, look.tickMs);
      out.push({ fromMs: at, toMs: to, hour: Math.floor(at / HOUR_MS) });
      at = to;
    }
  }
  return out;
}
const SLICES = afterSlices();

/** One simulated issue on a simulated page: its hourly before buckets (oldest first) and its after slices. */
export interface SimIssue {
  kind: Kind;
  before: Bucket[];
  after: Bucket[];
}

/** The rate of an issue of `kind` in before hour `h` (0 = 7 days before the deploy). */
export function beforeRate(kind: Kind, h: number): number {
  // A regression kind's issue was open (at the base rate) until it was fixed and resolved QUIET_HOURS before the deploy.
  if (kind.test === 'regression') return h >= BEFORE_HOURS - QUIET_HOURS ? QUIET_RATE : BASE_RATE;
  if (kind.id === 'burst' && h >= BEFORE_HOURS - STORM_HOURS) return kind.before * STORM_FACTOR;
  return kind.before;
}

/**
 * A page around a deploy at hour-of-week `phase`: the page-sessions of each before hour and after slice, and each
 * issue's affected sessions among them (at most one per session, as the tests count them).
 */
export function simulatePage(
  r: () => number,
  kinds: readonly Kind[],
  level: number,
  phase: number,
  noiseCv = HOUR_NOISE_CV,
) {
  const beforeSessions = Array.from({ length: BEFORE_HOURS }, (_, h) =>
    poisson(r, exposure(level, phase - BEFORE_HOURS + h)),
  );
  const afterSessions = SLICES.map((s) =>
    poisson(r, (exposure(level, phase + s.hour) * (s.toMs - s.fromMs)) / HOUR_MS),
  );
  const issues: SimIssue[] = kinds.map((kind) => {
    const before = beforeSessions.map((n, h) => ({
      sessions: n,
      affected: Math.min(n, poisson(r, n * beforeRate(kind, h) * rateFactor(r, phase - BEFORE_HOURS + h, noiseCv))),
      hour: phase - BEFORE_HOURS + h,
    }));
    const factors = new Map<number, number>();
    const after = SLICES.map((s, i) => {
      if (!factors.has(s.hour)) factors.set(s.hour, rateFactor(r, phase + s.hour, noiseCv));
      const n = afterSessions[i];
      return {
        sessions: n,
        affected: Math.min(n, poisson(r, n * kind.after * factors.get(s.hour)!)),
        hour: phase + s.hour,
      };
    });
    return { kind, before, after };
  });
  return { beforeSessions, afterSessions, issues };
}

/** The decisive result of a kind's test: what "caught" means for it. */
export const decisiveResult = (kind: Kind): string => (kind.test === 'fix' ? 'verified' : 'regressed');

const total = (b: readonly Bucket[]) => ({
  sessions: b.reduce((s, x) => s + x.sessions, 0),
  affected: b.reduce((s, x) => s + x.affected, 0),
});

/** After slices `[from, to)` merged by hour, as the processor counts them. */
function byHour(issue: SimIssue, from: number, to: number): Bucket[] {
  const hours = new Map<number, Bucket>();
  for (let i = from; i < to; i++) {
    const x = issue.after[i];
    const h = hours.get(SLICES[i].hour) ?? { sessions: 0, affected: 0, hour: x.hour };
    hours.set(SLICES[i].hour, { sessions: h.sessions + x.sessions, affected: h.affected + x.affected, hour: x.hour });
  }
  return [...hours.values()];
}

/** Before buckets (the quiet period for a regression) and after slices `[from, to)`, counted as the processor does. */
function counts(
  before: readonly Bucket[],
  issue: SimIssue,
  from: number,
  to: number,
  cycle?: Diurnal,
  model?: BeforeModel,
): IssueCounts {
  const after = byHour(issue, from, to);
  const b = total(before);
  const a = total(after);
  return {
    sessionsBefore: b.sessions,
    affectedBefore: b.affected,
    sessionsAfter: a.sessions,
    affectedAfter: a.affected,
    ...dispersionOf(before, after, cycle, model),
  };
}

/** Each issue's before window and its model, computed once: the before window does not change from look to look. */
const beforeOf = new WeakMap<SimIssue, { before: Bucket[]; model: BeforeModel; week: BeforeModel }>();
function beforeWindow(issue: SimIssue) {
  let b = beforeOf.get(issue);
  if (!b) {
    const before = issue.kind.test === 'regression' ? issue.before.slice(BEFORE_HOURS - QUIET_HOURS) : issue.before;
    const week = beforeModel(issue.before);
    b = { before, model: issue.kind.test === 'regression' ? beforeModel(before) : week, week };
    beforeOf.set(issue, b);
  }
  return b;
}

/** Counts at a look that has seen the first `slices` after slices. */
export function countsAt(issue: SimIssue, slices: number): IssueCounts {
  const { before, model } = beforeWindow(issue);
  return counts(before, issue, 0, slices, undefined, model);
}

/**
 * Counts of the test since the fix of an issue verified after `verifiedSlices` slices: before is the after traffic up
 * to the verification (by hour), after is the traffic since, up to `slices`.
 */
export function countsSinceFix(issue: SimIssue, verifiedSlices: number, slices: number): IssueCounts {
  // Hours, not days, before: the week before the deploy (168 hours) gives the daily cycle and bounds the rate
  // variances from below.
  const { week } = beforeWindow(issue);
  const c = counts(byHour(issue, 0, verifiedSlices), issue, verifiedSlices, slices, week.diurnal);
  return { ...c, dispersion: floorDispersion(c.dispersion!, week) };
}

export interface LookOutcome {
  look: string;
  result: string;
  counts: IssueCounts;
}

/**
 * One deploy's looks over its issues, as the processor takes them: at each look the issues of each family are tested
 * and corrected together with Holm at the look's alpha — fix tests of the open issues not yet verified; regression
 * tests of the closed issues not yet regressed and, since their fix, of the issues verified at an earlier look. Per
 * issue: each look's outcome, the time (ms after the deploy) of its decisive one or null, and for a verified issue
 * the time it was found regressed since its fix, or null.
 */
export function runDeploy(
  issues: readonly SimIssue[],
): { looks: LookOutcome[]; decidedAtMs: number | null; regressedAfterFixAtMs: number | null }[] {
  const out = issues.map(() => ({
    looks: [] as LookOutcome[],
    decidedAtMs: null as number | null,
    regressedAfterFixAtMs: null as number | null,
    verifiedSlices: 0,
  }));
  const done: string[] = [];
  for (const look of LOOK_TICKS) {
    const due = dueLook(look.afterMs, done);
    if (!due) continue;
    done.push(due.name);
    const slices = SLICES.filter((s) => s.toMs <= look.tickMs).length;
    // Fix family: open issues not verified yet.
    const open = issues
      .map((x, i) => ({ x, i }))
      .filter(({ x, i }) => x.kind.test === 'fix' && out[i].decidedAtMs === null);
    const fixCounts = open.map(({ x }) => countsAt(x, slices));
    const fixPs = fixCounts.map(fixPValue);
    const fixSig = holm(fixPs, due.alpha);
    // Regression family: closed issues not regressed yet, and issues verified at an earlier look (tested since their fix).
    const closed = issues
      .map((x, i) => ({ x, i }))
      .filter(
        ({ x, i }) =>
          (x.kind.test === 'regression' && out[i].decidedAtMs === null) ||
          (x.kind.test === 'fix' && out[i].decidedAtMs !== null && out[i].regressedAfterFixAtMs === null),
      );
    const regCounts = closed.map(({ x, i }) =>
      x.kind.test === 'fix' ? countsSinceFix(x, out[i].verifiedSlices, slices) : countsAt(x, slices),
    );
    const regPs = regCounts.map(regressionPValue);
    const regSig = holm(regPs, due.alpha);
    open.forEach(({ x, i }, k) => {
      const result = fixResult(fixCounts[k], fixPs[k], fixSig[k]);
      out[i].looks.push({ look: due.name, result, counts: fixCounts[k] });
      if (result === decisiveResult(x.kind)) {
        out[i].decidedAtMs = look.tickMs;
        out[i].verifiedSlices = slices;
      }
    });
    closed.forEach(({ x, i }, k) => {
      const result = regressionResult(regCounts[k], regPs[k], regSig[k]);
      out[i].looks.push({ look: due.name, result, counts: regCounts[k] });
      if (result !== 'regressed') return;
      if (x.kind.test === 'fix') out[i].regressedAfterFixAtMs = look.tickMs;
      else out[i].decidedAtMs = look.tickMs;
    });
  }
  return out.map(({ verifiedSlices: _v, ...o }) => o);
}

/** One simulated deploy for one issue of `kind` at `level` page-sessions per hour, at a random hour of the week. */
export function simulate(r: () => number, kind: Kind, level: number, noiseCv = HOUR_NOISE_CV) {
  const phase = Math.floor(r() * 168);
  return runDeploy(simulatePage(r, [kind], level, phase, noiseCv).issues)[0];
}

/** Each (kind, level) cell of the bench draws from its own generator, so a cell's figures do not depend on the others. */
export const cellRng = (seed: number, kind: Kind, level: number): (() => number) =>
  rng(seed * 1_000_003 + KINDS.indexOf(kind) * 100_003 + level);

/**
 * Share of `n` simulated deploys of `kind` at `level` whose issue got its decisive result by 24 h and by the last look,
 * the decision times, and the share verified and then (falsely, the fix holding) found regressed since the fix.
 */
export function catchRate(
  seed: number,
  kind: Kind,
  level: number,
  n: number,
  noiseCv = HOUR_NOISE_CV,
): { by24h: number; byLast: number; times: number[]; regressedAfterFix: number } {
  const r = cellRng(seed, kind, level);
  let by24h = 0;
  let byLast = 0;
  let regressedAfterFix = 0;
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = simulate(r, kind, level, noiseCv);
    if (s.regressedAfterFixAtMs !== null) regressedAfterFix++;
    if (s.decidedAtMs !== null) {
      byLast++;
      times.push(s.decidedAtMs);
      if (s.decidedAtMs <= 24 * HOUR_MS) by24h++;
    }
  }
  return { by24h: by24h / n, byLast: byLast / n, times, regressedAfterFix: regressedAfterFix / n };
}

/**
 * `n` deploys at `level`, each on a page with `issues` open issues whose rate the deploy multiplies by `ratio` (1:
 * unchanged; 0.5: exactly the fix test's null boundary, where each issue alone is falsely verified up to alpha of the
 * time): the share of deploys that verified any of them, with Holm (as the processor decides) and without (each
 * issue at the look's alpha alone).
 */
export function manyIssuesNoop(
  seed: number,
  level: number,
  issues: number,
  n: number,
  ratio = 1,
  noiseCv = HOUR_NOISE_CV,
): { holm: number; uncorrected: number } {
  const r = rng(seed * 7_919 + level + Math.round(ratio * 1000));
  const noop = { ...KINDS.find((k) => k.id === 'noop')!, after: BASE_RATE * ratio } as unknown as Kind;
  let anyHolm = 0;
  let anyAlone = 0;
  for (let i = 0; i < n; i++) {
    const page = simulatePage(
      r,
      Array.from({ length: issues }, () => noop),
      level,
      Math.floor(r() * 168),
      noiseCv,
    );
    if (runDeploy(page.issues).some((x) => x.decidedAtMs !== null)) anyHolm++;
    if (page.issues.some((x) => runDeploy([x])[0].decidedAtMs !== null)) anyAlone++;
  }
  return { holm: anyHolm / n, uncorrected: anyAlone / n };
}

/**
 * The power ceiling of a look: the share of deploys of `kind` that a test of its after count could decide, knowing
 * the before rate and the traffic model exactly (no estimate of either; the count is divided by its expectation
 * under the known cycles, so the hour of the deploy tells nothing more). Its null is the kind's boundary (for a fix:
 * half the before rate; for a regression: the quiet rate), simulated `n` times to find the ratio the look's `alpha`
 * allows, then the kind's own after rate simulated `n` times against it. A storm hour is shared by every session of
 * the hour, so no amount of traffic within one hour tells a 3× rise from a 4× storm: this is what bounds how early a
 * regression can be decided without a concurrent control.
 */
export function powerCeiling(
  seed: number,
  kind: Kind,
  level: number,
  tickMs: number,
  alpha: number,
  n: number,
  noiseCv = HOUR_NOISE_CV,
): number {
  const r = rng(seed * 31 + level + tickMs / 60_000);
  const slices = SLICES.filter((s) => s.toMs <= tickMs);
  const rateOf = (rate: number) => {
    const phase = Math.floor(r() * 168);
    const factors = new Map<number, number>();
    let expected = 0;
    let affected = 0;
    for (const s of slices) {
      if (!factors.has(s.hour)) factors.set(s.hour, rateFactor(r, phase + s.hour, noiseCv));
      const k = poisson(r, (exposure(level, phase + s.hour) * (s.toMs - s.fromMs)) / HOUR_MS);
      expected += k * rate * diurnalSwing(phase + s.hour);
      affected += poisson(r, k * rate * factors.get(s.hour)!);
    }
    return expected > 0 ? affected / expected : 0;
  };
  const fix = kind.test === 'fix';
  const boundary = fix ? kind.before * 0.5 : kind.before;
  // Under the null, the counts over their expectation a decision would need (the lowest for a fix, the highest for
  // a regression); the kind's own counts are measured against the null's expectation too.
  const nul = Array.from({ length: n }, () => rateOf(boundary)).sort((a, b) => (fix ? a - b : b - a));
  const cut = nul[Math.floor(alpha * n)];
  let decided = 0;
  for (let i = 0; i < n; i++) {
    const x = (rateOf(kind.after) * kind.after) / boundary;
    if (fix ? x < cut : x > cut) decided++;
  }
  return decided / n;
}

/** The q-quantile of decision times over all `n` deploys, undecided ones counting as never (null when it is never). */
export function quantileMs(times: readonly number[], n: number, q: number): number | null {
  const sorted = [...times].sort((a, b) => a - b);
  const k = Math.ceil(q * n) - 1;
  return k < sorted.length ? sorted[Math.max(0, k)] : null;
}

/** A decision time for people: minutes below an hour, hours below 3 days, else days. */
export function showTime(ms: number | null): string {
  if (ms === null) return '> 7 d';
  if (ms < HOUR_MS) return `${Math.round(ms / 60_000)} min`;
  if (ms < 72 * HOUR_MS) return `${Math.round(ms / HOUR_MS)} h`;
  return `${Math.round(ms / (24 * HOUR_MS))} d`;
}
