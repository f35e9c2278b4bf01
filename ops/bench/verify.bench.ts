/**
 * `npm run bench -- verify [--deploys N] [--seed S]`: verification quality of the pure deploy rules
 * (shared/domain/deploy-verification.ts) on simulated traffic. For each kind of deploy and traffic level it
 * simulates N deploys with hourly Poisson traffic, bursty affected-session counts, the 7-day before window and the
 * fixed looks, and prints the share of each outcome at the 24 h look and at the last look, and the median time to a
 * decisive verdict. No I/O: the same functions the processor calls, on counts the simulation generates.
 */
import { parseArgs } from 'node:util';
import { BEFORE_WINDOW_MS, LOOKS, checkRegression, dueLook, verifyIssue, type IssueCounts } from '../../shared/domain/deploy-verification.ts';
import { Progress } from './progress.ts';

const HOUR_MS = 3_600_000;
/** Page-sessions per hour on the issue's page. */
const LEVELS = [50, 200, 500, 2000, 5000];
/** Share of page-sessions affected by an open issue before its fix. */
const BASE_RATE = 0.03;
/** Residual rate of a fixed (resolved) issue in its quiet period: a real fix leaves a fifth. */
const QUIET_RATE = BASE_RATE * 0.2;
/** How long before the deploy a closed issue was resolved (its quiet period, the regression test's before window). */
const QUIET_HOURS = 72;
/** Hour-to-hour rate noise: Gamma(shape 4) with mean 1 (coefficient of variation 0.5)... */
const GAMMA_SHAPE = 4;
/** ...and rage-click storms: this share of hours runs at BURST_FACTOR times the rate. */
const BURST_SHARE = 0.03;
const BURST_FACTOR = 4;

const KINDS = [
  { name: 'real fix (-80%)', test: 'fix', before: BASE_RATE, after: BASE_RATE * 0.2 },
  { name: 'partial fix (-30%)', test: 'fix', before: BASE_RATE, after: BASE_RATE * 0.7 },
  { name: 'no-op', test: 'fix', before: BASE_RATE, after: BASE_RATE },
  { name: 'regression (3x)', test: 'regression', before: QUIET_RATE, after: QUIET_RATE * 3 },
  { name: 'stays fixed', test: 'regression', before: QUIET_RATE, after: QUIET_RATE },
] as const;

/** mulberry32: a small seeded generator, so runs are repeatable. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function normal(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}

/** Poisson(λ): Knuth's product method below 30, a rounded normal above (the simulation's noise, not the test's). */
function poisson(r: () => number, lambda: number): number {
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

/** One hour of traffic: page-sessions and affected sessions (at most one per session, as the test counts them). */
function hour(r: () => number, level: number, rate: number): { sessions: number; affected: number } {
  const sessions = poisson(r, level);
  const factor = gammaMeanOne(r, GAMMA_SHAPE) * (r() < BURST_SHARE ? BURST_FACTOR : 1);
  return { sessions, affected: Math.min(sessions, poisson(r, sessions * rate * factor)) };
}

type Outcome = string;

/** Simulates one deploy through every look; the outcome at 24 h, at the last look, and the hour of the first decisive one. */
function simulate(r: () => number, kind: (typeof KINDS)[number], level: number): { at24h: Outcome; final: Outcome; decisiveAtH: number | null } {
  const beforeHours = kind.test === 'fix' ? BEFORE_WINDOW_MS / HOUR_MS : QUIET_HOURS;
  let sb = 0;
  let ab = 0;
  for (let h = 0; h < beforeHours; h++) {
    const x = hour(r, level, kind.before);
    sb += x.sessions;
    ab += x.affected;
  }
  const done: string[] = [];
  let sa = 0;
  let aa = 0;
  let elapsedMs = 0;
  let at24h: Outcome = 'none';
  let last: Outcome = 'none';
  let decisiveAtH: number | null = null;
  const decisive = kind.test === 'fix' ? 'verified' : 'regressed';
  for (const look of LOOKS) {
    // Traffic up to this look, in whole hours (the 5-minute look sees a twelfth of an hour).
    while (elapsedMs < look.afterMs) {
      const step = Math.min(HOUR_MS, look.afterMs - elapsedMs);
      const x = hour(r, (level * step) / HOUR_MS, kind.after);
      sa += x.sessions;
      aa += x.affected;
      elapsedMs += step;
    }
    const due = dueLook(elapsedMs, done);
    if (!due) continue;
    done.push(due.name);
    const c: IssueCounts = { sessionsBefore: sb, affectedBefore: ab, sessionsAfter: sa, affectedAfter: aa };
    const outcome = kind.test === 'fix' ? verifyIssue(c, due.alpha, elapsedMs).result : checkRegression(c, due.alpha, elapsedMs).result;
    // Once decisive, the issue's status changed: later looks do not un-decide it.
    if (last !== decisive) last = outcome;
    if (outcome === decisive && decisiveAtH === null) decisiveAtH = look.afterMs / HOUR_MS;
    if (look.name === '24h') at24h = last;
  }
  return { at24h, final: last, decisiveAtH };
}

const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1)}%`.padStart(6);

export async function runBench(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { deploys: { type: 'string' }, seed: { type: 'string' } } });
  const n = Number(values.deploys ?? 400);
  const r = rng(Number(values.seed ?? 42));
  const progress = new Progress('verify', KINDS.length * LEVELS.length);
  const lines: string[] = [];
  let cells = 0;
  const started = Date.now();
  for (const kind of KINDS) {
    lines.push(`\n${kind.name}  (before ${(kind.before * 100).toFixed(1)}% of page-sessions affected, after ${(kind.after * 100).toFixed(1)}%)`);
    lines.push('  ps/hour │ at 24 h look                         │ at 7 d look                          │ median time to verdict');
    for (const level of LEVELS) {
      const at24: Record<string, number> = {};
      const final: Record<string, number> = {};
      const times: number[] = [];
      for (let i = 0; i < n; i++) {
        const s = simulate(r, kind, level);
        at24[s.at24h] = (at24[s.at24h] ?? 0) + 1;
        final[s.final] = (final[s.final] ?? 0) + 1;
        if (s.decisiveAtH !== null) times.push(s.decisiveAtH);
      }
      times.sort((a, b) => a - b);
      const show = (m: Record<string, number>) => Object.entries(m).sort().map(([k, v]) => `${k} ${pct(v, n)}`).join('  ');
      const median = times.length ? `${times[Math.floor(times.length / 2)]} h (${times.length}/${n} decided)` : 'never';
      lines.push(`  ${String(level).padStart(7)} │ ${show(at24).padEnd(36)} │ ${show(final).padEnd(36)} │ ${median}`);
      progress.update(++cells);
    }
  }
  progress.done();
  process.stdout.write(`deploy verification quality: ${n} simulated deploys per kind and traffic level (seed ${values.seed ?? 42}), ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  process.stdout.write(`traffic: hourly Poisson page-sessions; affected sessions Poisson with a Gamma(${GAMMA_SHAPE}) hourly rate factor and ${BURST_SHARE * 100}% burst hours at ${BURST_FACTOR}x\n`);
  process.stdout.write(`${lines.join('\n')}\n`);
  process.stdout.write(`\ntargets: real fix verified ≥ 95% at ≥ 500 ps/h by the 24 h look; no-op verified ≤ 5%; regressions caught ≥ 95%\n`);
}
