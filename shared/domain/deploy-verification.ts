/**
 * Deploy verification: pure rules, no I/O. The processor's deploy cycle feeds them counts read from the stored
 * events; the API, `friction deploy check` and the MCP prompt read the same verdict. The README's "How deploy
 * verification works" gives every constant with its reason.
 */

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** Deploy environments. Only these two exist (spec). */
export const ENVIRONMENTS = ['production', 'staging'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];
/** A batch's `context.environment` as the engine keeps it: only `staging` is staging; absent (or anything else the ingest let through) is production. */
export const environmentOf = (e: string | null | undefined): Environment =>
  e === 'staging' ? 'staging' : 'production';

/** Post-deploy traffic must span this long (first to last post-deploy event) before confusion_after exists (spec). */
export const MIN_AFTER_SPAN_MS = 5 * MINUTE_MS;
/** confusion_after keeps moving for this long after the deploy (or until the next deploy), then is frozen. */
export const AFTER_WINDOW_MS = 24 * HOUR_MS;
/** Without version-tagged sessions, "after" starts this long after the deploy: caches and open tabs still serve the old release. */
export const TIME_WINDOW_GRACE_MS = 5 * MINUTE_MS;
/** The before window of a verification: this long before the deploy. */
export const BEFORE_WINDOW_MS = 7 * DAY_MS;
/** A deploy with a Idempotency-Key answers the first result for this long. */
export const IDEMPOTENCY_WINDOW_MS = 24 * HOUR_MS;
/** The same (site, environment, version) recorded again within this long is the same deploy (a CI retry). */
export const SAME_VERSION_WINDOW_MS = 10 * MINUTE_MS;

/** Overall false-decision rate over all looks of one deploy: per issue, and per deploy across its issues (Holm). */
export const ALPHA = 0.05;
/** Affected sessions the after window would hold if nothing changed, below which a fix cannot show. */
export const MIN_EXPECTED_AFFECTED = 5;
/**
 * A fix must at least halve the rate of affected sessions per page-session: the test's null hypothesis is "the rate
 * fell by less than half", so a partial fix is falsely verified at most alpha of the time.
 */
export const VERIFIED_MAX_RATE_RATIO = 0.5;
/**
 * A closed issue regresses when its rate after a deploy is significantly above its quiet rate before and at least
 * this multiple of it. The multiple is a floor on the observed rate, not the test's null (testing against "at most
 * 1.5x" asks for proof of more than a 1.5x rise and misses most 3x regressions on thin traffic).
 */
export const REGRESSION_MIN_RATE_RATIO = 1.5;
/** ...and at least this many sessions were affected after the deploy (the engine's issue threshold). */
export const REGRESSION_MIN_AFFECTED = 3;
/** The verdict waits (WARN) until post-deploy data spans this long. */
export const VERDICT_MIN_DATA_MS = 15 * MINUTE_MS;
/** Introduced issues at or above this severity (0-100) fail the deploy: the top half of the scale. */
export const HIGH_SEVERITY = 50;
/** Score points of delta that fail a deploy when the site has no enabled spike rule (the spike default). */
export const DEFAULT_SPIKE_THRESHOLD = 20;
/** The width of the buckets the dispersion is estimated on: an hour, the scale at which friction swings. */
export const DISPERSION_BUCKET_MS = HOUR_MS;

/**
 * The fixed verification looks: time after the deploy at which each is due. The last one defines t = 1. A look is
 * taken only once the after cohort's traffic spans MIN_AFTER_SPAN_MS, so the first look always has data to test.
 */
export const LOOKS = [
  { name: 'initial', afterMs: 5 * MINUTE_MS },
  { name: '15m', afterMs: 15 * MINUTE_MS },
  { name: '1h', afterMs: HOUR_MS },
  { name: '4h', afterMs: 4 * HOUR_MS },
  { name: '24h', afterMs: DAY_MS },
  { name: '72h', afterMs: 3 * DAY_MS },
  { name: '7d', afterMs: 7 * DAY_MS },
] as const;
export type LookName = (typeof LOOKS)[number]['name'];
const HORIZON_MS = LOOKS[LOOKS.length - 1].afterMs;

/**
 * Alpha spent by time `elapsedMs` after the deploy: α·t^¼ with t = elapsed / 7 d (Kim-DeMets power family, ρ = ¼).
 * The fourth root front-loads the spending: a large effect on a busy page decides at the first looks (5 min: 0.0075,
 * 1 h: 0.0041, more than twice α·√t's) while the 24 h look, where ordinary effects decide, keeps as much (0.0111).
 */
export function alphaSpent(elapsedMs: number, alpha = ALPHA): number {
  return alpha * Math.min(1, Math.max(0, elapsedMs) / HORIZON_MS) ** 0.25;
}

/**
 * The look to take now: the latest due look not yet taken, with the alpha it may spend (everything since the last
 * look taken, so looks skipped while the processor was down, or while the after traffic was too short, are not
 * lost and the total never exceeds ALPHA). Null when no new look is due.
 */
export function dueLook(elapsedMs: number, done: readonly string[]): { name: LookName; alpha: number } | null {
  let due: (typeof LOOKS)[number] | null = null;
  let lastDoneMs = 0;
  for (const l of LOOKS) {
    if (done.includes(l.name)) lastDoneMs = l.afterMs;
    else if (l.afterMs <= elapsedMs) due = l;
  }
  if (due === null || due.afterMs <= lastDoneMs) return null;
  return { name: due.name, alpha: alphaSpent(due.afterMs) - alphaSpent(lastDoneMs) };
}

/** ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: relative error below 1e-15). */
export function logGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const z = x - 1;
  let a = c[0];
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += c[i] / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Continued fraction of the incomplete beta function (modified Lentz), for x < (a + 1) / (a + b + 2). */
function betaContinuedFraction(a: number, b: number, x: number): number {
  const TINY = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < TINY) d = TINY;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 100_000; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) break;
  }
  return h;
}

/**
 * The regularized incomplete beta function I_x(a, b), a, b > 0. The side that is small is computed directly (never
 * as 1 minus a near-1 value), so tail probabilities of 1e-30 keep their precision.
 */
export function regularizedBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const logFront = a * Math.log(x) + b * Math.log1p(-x) - (logGamma(a) + logGamma(b) - logGamma(a + b));
  if (x < (a + 1) / (a + b + 2)) return Math.min(1, (Math.exp(logFront) * betaContinuedFraction(a, b, x)) / a);
  return Math.max(0, 1 - (Math.exp(logFront) * betaContinuedFraction(b, a, 1 - x)) / b);
}

/**
 * P(X ≤ k) for X ~ Binomial(n, p), continued to real k and n by I_{1-p}(n - k, k + 1) (equal to the binomial CDF at
 * integers): the scaled counts of the overdispersed test below are not integers.
 */
export function binomialCdf(k: number, n: number, p: number): number {
  if (k < 0) return 0;
  if (k >= n || p <= 0) return 1;
  if (p >= 1) return 0;
  return regularizedBeta(1 - p, n - k, k + 1);
}

/** P(X ≥ k) for X ~ Binomial(n, p), continued to real k and n by I_p(k, n - k + 1). */
export function binomialUpperTail(k: number, n: number, p: number): number {
  if (k <= 0) return 1;
  if (k > n || p <= 0) return 0;
  if (p >= 1) return 1;
  return regularizedBeta(p, k, n - k + 1);
}

/**
 * One-sided conditional test of two Poisson rates with unequal exposure (Przyborowski-Wilenski), made
 * overdispersion-aware by effective counts: a count with variance φ × its mean carries the information of a Poisson
 * count x/φ over exposure n/φ (same rate). Given x1 affected in n1 page-sessions before (dispersion φ1) and x2 in n2
 * after (φ2), under the null "rate after = ratio × rate before", x2' | x1' + x2' ~ Binomial(x1' + x2',
 * ratio·n2' / (n1' + ratio·n2')) with x' = x/φ, n' = n/φ. `decrease` answers P(X2' ≤ x2') (evidence the rate is
 * below ratio × before), `increase` P(X2' ≥ x2'). With φ1 = φ2 = 1 this is the exact conditional binomial test.
 * 1 when there is nothing to compare.
 */
export function poissonRateTest(
  x1: number,
  n1: number,
  x2: number,
  n2: number,
  direction: 'decrease' | 'increase',
  ratio = 1,
  phi1 = 1,
  phi2 = 1,
): number {
  const e1 = x1 / phi1;
  const e2 = x2 / phi2;
  const k = e1 + e2;
  if (k === 0 || n1 <= 0 || n2 <= 0) return 1;
  const m1 = n1 / phi1;
  const m2 = n2 / phi2;
  const p0 = (ratio * m2) / (m1 + ratio * m2);
  return direction === 'decrease' ? binomialCdf(e2, k, p0) : binomialUpperTail(e2, k, p0);
}

/** One hourly bucket of a window: page-sessions on the issue's page and affected sessions. */
export interface Bucket {
  sessions: number;
  affected: number;
  /** The bucket's hour, counted from the epoch (its hour of day places it in the daily cycle); absent: unknown. */
  hour?: number;
}

/**
 * The daily cycle of an issue's rate: at hour of day h (UTC) the rate is r × (1 + sin·sin(2πh/24) + cos·cos(2πh/24)).
 * Zero coefficients: no cycle (or none shown by the data). `variance` is the estimate's sampling variance per
 * coefficient: the tests add it to the after window's (a cycle fitted on a week is known only so well).
 */
export interface Diurnal {
  sin: number;
  cos: number;
  variance: number;
}
const FLAT: Diurnal = { sin: 0, cos: 0, variance: 0 };

/** The angle of an hour in the daily cycle: hour of day h (UTC) is 2πh/24. */
const hourAngle = (hour: number) => (2 * Math.PI * (((hour % 24) + 24) % 24)) / 24;
/**
 * sin and cos of the 24 whole hours' angles, the same numbers Math.sin and Math.cos give for them: buckets are whole
 * hours, and these two calls were a fifth of a deploy look's CPU (the verify bench's simulation).
 */
const SIN = Array.from({ length: 24 }, (_, h) => Math.sin(hourAngle(h)));
const COS = Array.from({ length: 24 }, (_, h) => Math.cos(hourAngle(h)));
const hourSin = (hour: number) => (Number.isInteger(hour) ? SIN[((hour % 24) + 24) % 24] : Math.sin(hourAngle(hour)));
const hourCos = (hour: number) => (Number.isInteger(hour) ? COS[((hour % 24) + 24) % 24] : Math.cos(hourAngle(hour)));

/** The cycle's rate multiplier at `hour` (hours since the epoch); 1 when the hour is unknown. Never below 0.1. */
export function diurnalFactor(d: Diurnal, hour: number | undefined): number {
  if (hour === undefined) return 1;
  return Math.max(0.1, 1 + d.sin * hourSin(hour) + d.cos * hourCos(hour));
}

/**
 * The daily cycle of an issue's rate from a window's hourly buckets: one 24-hour harmonic fitted by Poisson-weighted
 * least squares to x_h / (n_h · r̂) on the calm hours (calmHours of a first fit on every hour: a storm would pull the
 * cycle toward its hour), then shrunk toward no cycle by its own noise (factor max(0, 1 − 2·se²/amplitude²), se² =
 * φ·tr(G⁻¹)/2 with G the fit's Gram matrix and φ the hours' dispersion): a cycle the data cannot show is not applied.
 * Flat with fewer than 24 hours of known hour.
 */
export function diurnalProfile(buckets: readonly Bucket[]): Diurnal {
  const first = harmonicFit(buckets);
  return first === FLAT ? FLAT : harmonicFit(calmHours(buckets, first));
}

function harmonicFit(buckets: readonly Bucket[]): Diurnal {
  const used = buckets.filter((b) => b.sessions > 0 && b.hour !== undefined);
  const n = used.reduce((s, b) => s + b.sessions, 0);
  const x = used.reduce((s, b) => s + b.affected, 0);
  if (used.length < 24 || x === 0) return FLAT;
  const r = x / n;
  let ss = 0;
  let sc = 0;
  let cc = 0;
  let ys = 0;
  let yc = 0;
  for (const b of used) {
    const s = hourSin(b.hour!);
    const c = hourCos(b.hour!);
    const mu = b.sessions * r;
    ss += mu * s * s;
    sc += mu * s * c;
    cc += mu * c * c;
    ys += (b.affected - mu) * s;
    yc += (b.affected - mu) * c;
  }
  const det = ss * cc - sc * sc;
  if (det <= 0) return FLAT;
  const sin = (ys * cc - yc * sc) / det;
  const cos = (yc * ss - ys * sc) / det;
  const phi = windowDispersion(rateVariance(used), r, bucketSize(used.map((b) => b.sessions)));
  const se2 = phi * ((ss + cc) / (2 * det));
  const amp2 = sin * sin + cos * cos;
  const shrink = amp2 === 0 ? 0 : Math.max(0, 1 - (2 * se2) / amp2);
  return shrink === 0 ? FLAT : { sin: sin * shrink, cos: cos * shrink, variance: se2 };
}

/** Σ n_h · f(h): a window's page-sessions weighted by the daily cycle (the exposure the tests compare). */
export const cycleExposure = (buckets: readonly Bucket[], d: Diurnal): number =>
  buckets.reduce((s, b) => s + b.sessions * diurnalFactor(d, b.hour), 0);

/**
 * The hour-to-hour variance of an issue's rate beyond Poisson, from a window's hourly buckets: the
 * negative-binomial (NB2) scale c of "affected in an hour ~ Poisson(n_h · r · f_h · M_h), Var(M_h) = c", f_h the
 * daily cycle's factor. With μ_h = n_h · f_h · r̂ (r̂ = Σx / Σn·f), the method-of-moments estimate is
 * c = Σ[(x_h − μ_h)² − μ_h] / Σ μ_h², floored at 0 (never bolder than Poisson). 0 when there is no affected session or
 * fewer than 2 buckets with traffic.
 */
export function rateVariance(buckets: readonly Bucket[], d: Diurnal = FLAT): number {
  const used = buckets.filter((b) => b.sessions > 0);
  const n = cycleExposure(used, d);
  const x = used.reduce((s, b) => s + b.affected, 0);
  if (used.length < 2 || x === 0) return 0;
  const r = x / n;
  let num = 0;
  let den = 0;
  for (const b of used) {
    const mu = b.sessions * diurnalFactor(d, b.hour) * r;
    num += (b.affected - mu) ** 2 - mu;
    den += mu * mu;
  }
  return Math.max(0, num / den);
}

/** Σ n_h² / Σ n_h of a window's hourly page-sessions: the exposure-weighted bucket size (0 for an empty window). */
export function bucketSize(sessions: readonly number[]): number {
  const total = sessions.reduce((s, n) => s + n, 0);
  return total === 0 ? 0 : sessions.reduce((s, n) => s + n * n, 0) / total;
}

/**
 * The dispersion φ = Var / mean of a window's affected count at rate `rate`, given the hourly rate variance c and
 * the window's bucket size S = Σn²/Σn: Σ(μ_h + c·μ_h²) / Σμ_h = 1 + c · rate · S. Never below 1 (Poisson).
 */
export const windowDispersion = (c: number, rate: number, size: number): number =>
  1 + Math.max(0, c) * Math.max(0, rate) * Math.max(0, size);

/** A storm hour stands this many standard deviations above its expected count (and at least STORM_MIN_EXCESS above it). */
export const STORM_Z = 3.5;
export const STORM_MIN_EXCESS = 3;

/**
 * The before window without its storm hours: the hours whose affected count stands more than STORM_Z standard
 * deviations (of the NB model fitted to the remaining hours) and STORM_MIN_EXCESS sessions above its expected count,
 * found by refitting until no hour changes side (at most 10 rounds; the first round against Poisson alone, so storms
 * cannot hide behind the variance they cause). A storm only ever adds affected sessions, so
 * the calm hours' rate and variance describe the low side of an hour's count: what a fix test needs.
 */
export function calmHours(buckets: readonly Bucket[], d: Diurnal): Bucket[] {
  let calm = buckets.filter((b) => b.sessions > 0);
  for (let round = 0; round < 10; round++) {
    const n = cycleExposure(calm, d);
    const x = calm.reduce((s, b) => s + b.affected, 0);
    if (n === 0 || x === 0) break;
    const r = x / n;
    // The first round assumes no extra variance: storms would inflate it and hide themselves.
    const c = round === 0 ? 0 : rateVariance(calm, d);
    const next = buckets.filter((b) => {
      if (b.sessions <= 0) return false;
      const mu = b.sessions * diurnalFactor(d, b.hour) * r;
      return !(b.affected - mu > STORM_MIN_EXCESS && b.affected - mu > STORM_Z * Math.sqrt(mu + c * mu * mu));
    });
    if (next.length === calm.length) break;
    calm = next;
  }
  return calm;
}

/** The overdispersion model of one issue's test (see IssueCounts.dispersion). */
export interface Dispersion {
  /** c of the before window, every hour (storms included) around its daily cycle. */
  rateVariance: number;
  /** Bucket sizes (bucketSize) of the before and after windows' hourly page-sessions. */
  beforeBucket: number;
  afterBucket: number;
  /** The daily cycle fitted on the before window, and each window's page-sessions weighted by it (cycleExposure). */
  diurnal?: Diurnal;
  beforeExposure?: number;
  afterExposure?: number;
  /** The before window without its storm hours (calmHours): affected sessions, weighted exposure, c and bucket size. */
  calm?: { affected: number; exposure: number; rateVariance: number; bucket: number };
  /**
   * The after window without its peak hour and without the hours that stand out as storms against the rest of it
   * (calmHours of the after window, at its own rate): what a regression must show in. A regression lifts every
   * hour, a storm one or two.
   */
  afterCalm?: { sessions: number; affected: number; exposure: number; bucket: number };
}

/** What the tests need of the before window: its daily cycle and calm hours (beforeModel). */
export interface BeforeModel {
  diurnal: Diurnal;
  rateVariance: number;
  beforeBucket: number;
  beforeExposure: number;
  calm: NonNullable<Dispersion['calm']>;
}

/**
 * The before window's part of the dispersion model: its daily cycle (or `cycle`, when the window is too short to
 * show one: the test since a fix has hours, not days), c around it, its weighted exposure and its calm hours. It does
 * not change from look to look, so a caller may compute it once.
 */
export function beforeModel(before: readonly Bucket[], cycle?: Diurnal): BeforeModel {
  const diurnal = cycle ?? diurnalProfile(before);
  const calm = calmHours(before, diurnal);
  return {
    diurnal,
    rateVariance: rateVariance(before, diurnal),
    beforeBucket: bucketSize(before.map((b) => b.sessions)),
    beforeExposure: cycleExposure(before, diurnal),
    calm: {
      affected: calm.reduce((s, b) => s + b.affected, 0),
      exposure: cycleExposure(calm, diurnal),
      rateVariance: rateVariance(calm, diurnal),
      bucket: bucketSize(calm.map((b) => b.sessions)),
    },
  };
}

/**
 * The dispersion model of a test from its windows' hourly buckets: the before window's (beforeModel), the after
 * window's weighted exposure, bucket size and calm hours, and its peak hour.
 */
export function dispersionOf(
  before: readonly Bucket[],
  after: readonly Bucket[],
  cycle?: Diurnal,
  model: BeforeModel = beforeModel(before, cycle),
): { dispersion: Dispersion; afterPeak: Bucket | undefined } {
  const afterPeak = after.reduce<Bucket | undefined>(
    (m, b) => (m === undefined || b.affected > m.affected ? b : m),
    undefined,
  );
  const afterCalm = calmHours(
    after.filter((b) => b !== afterPeak),
    model.diurnal,
  );
  return {
    dispersion: {
      ...model,
      afterBucket: bucketSize(after.map((b) => b.sessions)),
      afterExposure: cycleExposure(after, model.diurnal),
      afterCalm: {
        sessions: afterCalm.reduce((s, b) => s + b.sessions, 0),
        affected: afterCalm.reduce((s, b) => s + b.affected, 0),
        exposure: cycleExposure(afterCalm, model.diurnal),
        bucket: bucketSize(afterCalm.map((b) => b.sessions)),
      },
    },
    afterPeak,
  };
}

/**
 * A test since a fix has a day or so of hours before it, which estimates the rate variance poorly: the week before
 * the deploy (168 hours) bounds both variances from below.
 */
export function floorDispersion(d: Dispersion, week: Pick<Dispersion, 'rateVariance' | 'calm'>): Dispersion {
  return {
    ...d,
    rateVariance: Math.max(d.rateVariance, week.rateVariance),
    calm: d.calm && {
      ...d.calm,
      rateVariance: Math.max(d.calm.rateVariance, week.calm?.rateVariance ?? week.rateVariance),
    },
  };
}

/** Counts of one issue's cluster before and after a deploy. */
export interface IssueCounts {
  /** Distinct page-sessions (sessions that viewed the issue's page) in the window: the exposure. */
  sessionsBefore: number;
  sessionsAfter: number;
  /** Distinct sessions with the issue's signal on its element: the events. */
  affectedBefore: number;
  affectedAfter: number;
  /**
   * Overdispersion: the hourly rate variance c (rateVariance of the before window) and each window's bucket size
   * (bucketSize of its hourly page-sessions). Absent: Poisson (φ = 1 on both sides).
   */
  dispersion?: Dispersion;
  /**
   * The after window's hourly bucket with the most affected sessions. A regression must hold without it: one burst
   * hour (a rage-click storm) looks exactly like a rise, so a rise seen in a single hour is not yet a regression.
   */
  afterPeak?: Bucket;
}

export type VerificationResult = 'verified' | 'not_verified' | 'insufficient_data';
export type RegressionResult = 'regressed' | 'not_regressed' | 'insufficient_data';

/** Rate after over rate before; Infinity when there was nothing before and something after, 1 when both are empty. */
export function rateRatio(c: IssueCounts): number {
  const before = c.sessionsBefore > 0 ? c.affectedBefore / c.sessionsBefore : 0;
  const after = c.sessionsAfter > 0 ? c.affectedAfter / c.sessionsAfter : 0;
  if (before === 0) return after === 0 ? 1 : Number.POSITIVE_INFINITY;
  return after / before;
}

/**
 * φ of the after window at rate `rate` with hourly rate variance `c`, plus the daily cycle's uncertainty: a relative
 * error of variance v in the cycle's factor adds v·μ² to the variance of a count of mean μ, so v·μ to φ.
 */
function afterDispersion(d: Dispersion, c: number, rate: number, size: number, exposure: number): number {
  return windowDispersion(c, rate, size) + (d.diurnal?.variance ?? 0) * Math.max(0, rate) * exposure;
}

/** φ before and φ after of a test whose null is "rate after = ratio × rate before", every before hour counted. */
export function dispersions(c: IssueCounts, ratio: number): { before: number; after: number } {
  if (!c.dispersion || c.sessionsBefore <= 0) return { before: 1, after: 1 };
  const d = c.dispersion;
  const r = c.affectedBefore / (d.beforeExposure ?? c.sessionsBefore);
  return {
    before: windowDispersion(d.rateVariance, r, d.beforeBucket),
    after: afterDispersion(d, d.rateVariance, ratio * r, d.afterBucket, d.afterExposure ?? c.sessionsAfter),
  };
}

/**
 * The fix test of one open issue: its one-sided p-value against "the rate fell by less than half", or null
 * (insufficient_data) when there is nothing to test: no page-session before or after (zero exposure is never
 * evidence), or fewer than MIN_EXPECTED_AFFECTED affected sessions expected after if nothing changed (with fewer,
 * even zero cannot prove a fix). With the dispersion model, before is the before window's calm hours (a storm only
 * ever adds sessions, so an issue opened by one is compared with its usual rate, not its storm) and both windows'
 * page-sessions are weighted by the daily cycle (a fix deployed in the evening is not the evening's usual dip).
 */
export function fixPValue(c: IssueCounts): number | null {
  if (c.sessionsAfter <= 0 || c.sessionsBefore <= 0) return null;
  const d = c.dispersion;
  if (d?.calm && d.afterExposure !== undefined) {
    const { affected, exposure, rateVariance: cv, bucket } = d.calm;
    if (exposure <= 0 || d.afterExposure <= 0) return null;
    const r = affected / exposure;
    if (r * d.afterExposure < MIN_EXPECTED_AFFECTED) return null;
    return poissonRateTest(
      affected,
      exposure,
      c.affectedAfter,
      d.afterExposure,
      'decrease',
      VERIFIED_MAX_RATE_RATIO,
      windowDispersion(cv, r, bucket),
      afterDispersion(d, cv, VERIFIED_MAX_RATE_RATIO * r, d.afterBucket, d.afterExposure),
    );
  }
  const expected = (c.affectedBefore / c.sessionsBefore) * c.sessionsAfter;
  if (expected < MIN_EXPECTED_AFFECTED) return null;
  const phi = dispersions(c, VERIFIED_MAX_RATE_RATIO);
  return poissonRateTest(
    c.affectedBefore,
    c.sessionsBefore,
    c.affectedAfter,
    c.sessionsAfter,
    'decrease',
    VERIFIED_MAX_RATE_RATIO,
    phi.before,
    phi.after,
  );
}

/**
 * The regression test of one closed issue (before = its quiet period): its one-sided p-value against "the rate did
 * not rise above the quiet rate", or null (insufficient_data) when no page-session was seen in the quiet period or
 * after it (zero exposure is never evidence: without a quiet rate there is nothing to have risen from), or when all
 * the after traffic is in the peak hour. With the peak hour given, the larger of two p-values: the whole after window
 * with every before hour's variance (storms included), and the after window without its peak hour with the calm
 * hours' variance (one storm hour looks exactly like a rise, so a rise seen in a single hour is not yet a regression;
 * without that hour, the rest need not carry the storms' variance). Page-sessions are weighted by the daily cycle.
 */
export function regressionPValue(c: IssueCounts): number | null {
  if (c.sessionsAfter <= 0 || c.sessionsBefore <= 0) return null;
  const d = c.dispersion;
  const n1 = d?.beforeExposure ?? c.sessionsBefore;
  const n2 = d?.afterExposure ?? c.sessionsAfter;
  const phi = dispersions(c, 1);
  const full = poissonRateTest(c.affectedBefore, n1, c.affectedAfter, n2, 'increase', 1, phi.before, phi.after);
  if (d?.afterCalm) {
    // Without its peak and storm hours: nothing left (the rise is all in one hour) is no decision yet.
    const a = d.afterCalm;
    if (a.sessions <= 0 || a.exposure <= 0) return null;
    const r = c.affectedBefore / n1;
    const restPhi = afterDispersion(d, d.calm?.rateVariance ?? d.rateVariance, r, a.bucket, a.exposure);
    return Math.max(
      full,
      poissonRateTest(c.affectedBefore, n1, a.affected, a.exposure, 'increase', 1, phi.before, restPhi),
    );
  }
  if (!c.afterPeak) return full;
  // Without its peak hour: nothing left (the rise is all in one hour) is no decision yet.
  const rest = c.sessionsAfter - c.afterPeak.sessions;
  if (rest <= 0) return null;
  return Math.max(
    full,
    poissonRateTest(
      c.affectedBefore,
      n1,
      Math.max(0, c.affectedAfter - c.afterPeak.affected),
      rest,
      'increase',
      1,
      phi.before,
      phi.after,
    ),
  );
}

/** One hour of the after window: the new release's sessions and the old release's sessions of the same hour (the control). */
export interface Stratum {
  newSessions: number;
  newAffected: number;
  controlSessions: number;
  controlAffected: number;
}

/** Which comparison decides a test: the concurrent old-version cohort, or the issue's own before window. */
export type Control = 'concurrent' | 'before_window';

/** Binomial(n, p) probabilities 0..n, from the log pmf (stable for any n and p). */
function binomialPmf(n: number, p: number): number[] {
  if (p <= 0) return [1, ...new Array<number>(n).fill(0)];
  if (p >= 1) return [...new Array<number>(n).fill(0), 1];
  const lc = logGamma(n + 1);
  return Array.from({ length: n + 1 }, (_, k) =>
    Math.exp(lc - logGamma(k + 1) - logGamma(n - k + 1) + k * Math.log(p) + (n - k) * Math.log1p(-p)),
  );
}

/** Largest total affected (new + control, over the strata) the exact convolution handles; above it, the normal approximation. */
const EXACT_STRATA_TOTAL = 4000;

/**
 * The concurrent-control test, conditional and stratified by hour: within hour h both cohorts share the hour's rate
 * factor, so given t_h = new_h + control_h affected, under the null "rate new = ratio × rate control"
 * new_h ~ Binomial(t_h, ratio·nNew_h / (nControl_h + ratio·nNew_h)) whatever that factor was — the hour-to-hour
 * swings cancel and no dispersion is needed. The statistic is T = Σ new_h; its null distribution is the
 * convolution of the strata's binomials (exact up to EXACT_STRATA_TOTAL affected, a normal approximation with
 * continuity correction above). `decrease` answers P(T ≤ t), `increase` P(T ≥ t). 1 when there is nothing to compare.
 */
export function concurrentPValue(strata: readonly Stratum[], direction: 'decrease' | 'increase', ratio = 1): number {
  const used = strata.filter(
    (s) => s.newSessions > 0 && s.controlSessions > 0 && s.newAffected + s.controlAffected > 0,
  );
  const total = used.reduce((a, s) => a + s.newAffected + s.controlAffected, 0);
  if (total === 0) return 1;
  const observed = used.reduce((a, s) => a + s.newAffected, 0);
  const p = used.map((s) => (ratio * s.newSessions) / (s.controlSessions + ratio * s.newSessions));
  if (total > EXACT_STRATA_TOTAL) {
    let mean = 0;
    let variance = 0;
    used.forEach((s, i) => {
      const t = s.newAffected + s.controlAffected;
      mean += t * p[i];
      variance += t * p[i] * (1 - p[i]);
    });
    if (variance === 0) return direction === 'decrease' ? (observed <= mean ? 1 : 0) : observed >= mean ? 1 : 0;
    const z =
      direction === 'decrease'
        ? (observed + 0.5 - mean) / Math.sqrt(variance)
        : (mean - (observed - 0.5)) / Math.sqrt(variance);
    return normalCdf(z);
  }
  let dist = [1];
  used.forEach((s, i) => {
    const pmf = binomialPmf(s.newAffected + s.controlAffected, p[i]);
    const next = new Array<number>(dist.length + pmf.length - 1).fill(0);
    for (let a = 0; a < dist.length; a++) {
      if (dist[a] === 0) continue;
      for (let b = 0; b < pmf.length; b++) next[a + b] += dist[a] * pmf[b];
    }
    dist = next;
  });
  let tail = 0;
  if (direction === 'decrease') for (let k = 0; k <= observed; k++) tail += dist[k];
  else for (let k = observed; k < dist.length; k++) tail += dist[k];
  return Math.min(1, Math.max(0, tail));
}

/** Φ(z), the standard normal CDF (via the complementary error function: Numerical Recipes' erfc, |error| < 1.2e-7). */
function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * x);
  const erfc =
    t *
    Math.exp(
      -x * x -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return z >= 0 ? 1 - erfc / 2 : erfc / 2;
}

/** The strata's totals as counts (control as "before"): what the record shows and the effect floors read. */
export function strataCounts(strata: readonly Stratum[]): IssueCounts {
  const used = strata.filter((s) => s.newSessions > 0 && s.controlSessions > 0);
  return {
    sessionsBefore: used.reduce((a, s) => a + s.controlSessions, 0),
    affectedBefore: used.reduce((a, s) => a + s.controlAffected, 0),
    sessionsAfter: used.reduce((a, s) => a + s.newSessions, 0),
    affectedAfter: used.reduce((a, s) => a + s.newAffected, 0),
  };
}

/**
 * Whether the concurrent control decides: when the old version's sessions in the hours the new version was also
 * seen would hold at least MIN_EXPECTED_AFFECTED affected sessions at the issue's before-window rate (enough to
 * compare with). Chosen from exposure alone, before any outcome is looked at, so picking it costs no alpha.
 */
export function chooseControl(strata: readonly Stratum[], beforeRate: number): Control {
  const control = strataCounts(strata).sessionsBefore;
  return control * beforeRate >= MIN_EXPECTED_AFFECTED ? 'concurrent' : 'before_window';
}

/** A fix decision from its (Holm-adjusted) significance: verified only when the observed rate also at least halved. */
export function fixResult(c: IssueCounts, pValue: number | null, significant: boolean): VerificationResult {
  if (pValue === null) return 'insufficient_data';
  return significant && rateRatio(c) <= VERIFIED_MAX_RATE_RATIO ? 'verified' : 'not_verified';
}

/**
 * A regression decision from its (Holm-adjusted) significance: regressed only when at least REGRESSION_MIN_AFFECTED
 * sessions were affected after and the observed rate is at least REGRESSION_MIN_RATE_RATIO × the quiet rate.
 */
export function regressionResult(c: IssueCounts, pValue: number | null, significant: boolean): RegressionResult {
  if (pValue === null) return 'insufficient_data';
  return significant && c.affectedAfter >= REGRESSION_MIN_AFFECTED && rateRatio(c) >= REGRESSION_MIN_RATE_RATIO
    ? 'regressed'
    : 'not_regressed';
}

/**
 * Holm's step-down procedure: which of a family's hypotheses are rejected at family-wise error `alpha`. Sorted by
 * p-value, the j-th smallest (from 0) is rejected when it and every smaller one satisfy p ≤ alpha / (m − j), m being
 * the number of tests actually run (null p-values, insufficient data, are not tests and do not count). Valid under
 * any dependence between the tests (the issues of one page share their page-sessions).
 */
export function holm(pValues: readonly (number | null)[], alpha: number): boolean[] {
  const order = pValues
    .map((p, i) => ({ p, i }))
    .filter((x): x is { p: number; i: number } => x.p !== null)
    .sort((a, b) => a.p - b.p);
  const out = pValues.map(() => false);
  for (let j = 0; j < order.length; j++) {
    if (order[j].p > alpha / (order.length - j)) break;
    out[order[j].i] = true;
  }
  return out;
}

/** Is one open issue fixed, tested alone (a family of one) at `alpha`? */
export function verifyIssue(c: IssueCounts, alpha: number): { result: VerificationResult; pValue: number | null } {
  const p = fixPValue(c);
  return { result: fixResult(c, p, p !== null && p <= alpha), pValue: p };
}

/** Did one resolved or verified issue come back, tested alone (a family of one) at `alpha`? */
export function checkRegression(c: IssueCounts, alpha: number): { result: RegressionResult; pValue: number | null } {
  const p = regressionPValue(c);
  return { result: regressionResult(c, p, p !== null && p <= alpha), pValue: p };
}

/** Is confusion_after measurable yet: post-deploy traffic spanning MIN_AFTER_SPAN_MS? */
export function afterReady(firstAfterMs: number | null, lastAfterMs: number | null): boolean {
  return firstAfterMs !== null && lastAfterMs !== null && lastAfterMs - firstAfterMs >= MIN_AFTER_SPAN_MS;
}

/** When confusion_after stops moving: 24 h after the deploy, or the next deploy of its environment if sooner. */
export function afterWindowEnd(recordedAtMs: number, nextDeployAtMs: number | null): number {
  const end = recordedAtMs + AFTER_WINDOW_MS;
  return nextDeployAtMs !== null && nextDeployAtMs < end ? nextDeployAtMs : end;
}

/**
 * Which sessions count as "after": release-aware when post-deploy sessions report the deploy's version (only they
 * are evidence of the new release), otherwise every session from TIME_WINDOW_GRACE_MS after the deploy.
 */
export function chooseCohort(versionTaggedSessions: number): 'version' | 'time_window' {
  return versionTaggedSessions > 0 ? 'version' : 'time_window';
}

export type Verdict = 'PASS' | 'WARN' | 'FAIL';

export interface VerdictInput {
  /** null while fewer than MIN_AFTER_SPAN_MS of post-deploy traffic exist. */
  delta: number | null;
  /** Span of post-deploy data (ms); 0 when there is none. */
  dataSpanMs: number;
  /** The site's spike threshold in score points (enabled spike rule's threshold, else DEFAULT_SPIKE_THRESHOLD). */
  spikeThreshold: number;
  /** Issues a look's regression test found regressed after the deploy (the engine's live signal only marks them signalling again). */
  regressed: readonly { title: string }[];
  introduced: readonly { title: string; severity: number }[];
  /** Latest result of each open issue tested at a look (isDecidingLook: every look decides). */
  tested: readonly { title: string; result: VerificationResult }[];
  verified: readonly { title: string }[];
}

/**
 * Whether a look may decide: every look of LOOKS does (the overdispersion-aware test and the alpha spent so far set
 * how strong the evidence must be, not a minimum span); a record of an unknown look name (an older release's) does not.
 */
export function isDecidingLook(name: string): boolean {
  return LOOKS.some((l) => l.name === name);
}

/**
 * The deploy's verdict with its reasons (one pure rule shared by the API, the CLI and the MCP prompt):
 * FAIL when an issue regressed, an issue of severity ≥ HIGH_SEVERITY was introduced, or delta exceeds the spike
 * threshold; otherwise WARN while post-deploy data spans less than VERDICT_MIN_DATA_MS (or confusion_after is
 * still null) and no issue has been verified yet, or when issues were tested at a look and none could be decided
 * (all insufficient_data);
 * otherwise PASS. A PASS can still become FAIL when a later look finds a regression.
 */
export function deployVerdict(i: VerdictInput): { verdict: Verdict; reasons: string[] } {
  const fail: string[] = [];
  for (const r of i.regressed) fail.push(`issue regressed: ${r.title}`);
  for (const n of i.introduced)
    if (n.severity >= HIGH_SEVERITY) fail.push(`high-severity issue introduced (severity ${n.severity}): ${n.title}`);
  if (i.delta !== null && i.delta > i.spikeThreshold)
    fail.push(`confusion score rose by ${i.delta} points (spike threshold ${i.spikeThreshold})`);
  if (fail.length > 0) return { verdict: 'FAIL', reasons: fail };

  const warn: string[] = [];
  // A fix verified by a look's test had enough data for that decision: overwhelming evidence passes in minutes.
  if ((i.delta === null || i.dataSpanMs < VERDICT_MIN_DATA_MS) && i.verified.length === 0) {
    warn.push(
      `insufficient data: post-deploy traffic spans ${Math.floor(i.dataSpanMs / MINUTE_MS)} min (needs ${VERDICT_MIN_DATA_MS / MINUTE_MS})`,
    );
  }
  if (i.tested.length > 0 && i.verified.length === 0 && i.tested.every((t) => t.result === 'insufficient_data')) {
    warn.push(`inconclusive: ${i.tested.length} open issue(s) tested, none with enough data yet`);
  }
  if (warn.length > 0) return { verdict: 'WARN', reasons: warn };

  const pass: string[] = [];
  if (i.verified.length > 0) pass.push(`${i.verified.length} issue(s) verified fixed`);
  if (i.delta !== null)
    pass.push(
      `confusion score ${i.delta > 0 ? 'rose' : i.delta < 0 ? 'fell' : 'moved'} by ${Math.abs(i.delta)} points (spike threshold ${i.spikeThreshold})`,
    );
  pass.push('no regression and no high-severity issue introduced');
  return { verdict: 'PASS', reasons: pass };
}
