/**
 * `npm run bench -- verify [--deploys N] [--seed S] [--issues 20]`: verification quality of the pure deploy rules
 * (shared/domain/deploy-verification.ts) on simulated traffic (ops/bench/verify-sim.ts). For each kind of deploy and
 * traffic level it simulates N deploys through the 7-day before window and every look, and prints the share decided
 * (verified or regressed) by 24 h and by 7 d with the median and p90 time to the decision; then the no-op deploys
 * over `--issues` unchanged open issues (any verified, with and without Holm); then each target, met or not.
 *
 * `npm run bench -- verify --pipeline [--per-kind N] [--levels 50,200] [--seed S]`: the same traffic through the
 * real ingest → NATS → processor → PostgreSQL path (ops/bench/verify-pipeline.ts).
 */
import { parseArgs } from 'node:util';
import { ALPHA, alphaSpent } from '../../shared/domain/deploy-verification.ts';
import { Progress } from './progress.ts';
import {
  BURST_FACTOR,
  BURST_SHARE,
  DIURNAL_EXPOSURE,
  DIURNAL_RATE,
  HOUR_NOISE_CV,
  HOUR_MS,
  KINDS,
  LEVELS,
  STORM_FACTOR,
  STORM_HOURS,
  WEEKEND,
  LOOK_TICKS,
  catchRate,
  manyIssuesNoop,
  powerCeiling,
  quantileMs,
  showTime,
} from './verify-sim.ts';
import { runPipelineBench } from './verify-pipeline.ts';

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

async function runPureBench(values: {
  deploys?: string;
  seed?: string;
  issues?: string;
  'hour-noise'?: string;
}): Promise<void> {
  const n = Number(values.deploys ?? 1000);
  const noise = Number(values['hour-noise'] ?? HOUR_NOISE_CV);
  const seed = Number(values.seed ?? 42);
  const many = Number(values.issues ?? 20);
  const progress = new Progress('verify', KINDS.length * LEVELS.length + LEVELS.length);
  const lines: string[] = [];
  const cells = new Map<string, ReturnType<typeof catchRate>>();
  let done = 0;
  const started = Date.now();
  lines.push(
    '  kind                                    ps/h │ decided by 24 h │ by 7 d │ time to decision: median   p90   (undecided count as never) │ verified, then regressed since the fix',
  );
  for (const kind of KINDS) {
    for (const level of LEVELS) {
      const c = catchRate(seed, kind, level, n, noise);
      cells.set(`${kind.id}:${level}`, c);
      lines.push(
        `  ${kind.name.padEnd(38)} ${String(level).padStart(5)} │ ${pct(c.by24h).padStart(15)} │ ${pct(c.byLast).padStart(6)} │ ${showTime(quantileMs(c.times, n, 0.5)).padStart(25)} ${showTime(quantileMs(c.times, n, 0.9)).padStart(7)}${kind.test === 'fix' ? ` ${''.padStart(28)} │ ${pct(c.regressedAfterFix).padStart(6)}` : ''}`,
      );
      progress.update(++done);
    }
  }
  const manyLines: string[] = [];
  const manyRes = new Map<number, { holm: number; uncorrected: number }>();
  const manyN = Math.max(50, Math.round(n / 4));
  for (const level of LEVELS) {
    const m = manyIssuesNoop(seed, level, many, manyN, 1, noise);
    const half = manyIssuesNoop(seed, level, many, manyN, 0.5, noise);
    manyRes.set(level, m);
    manyRes.set(-level, half);
    manyLines.push(
      `  ${String(level).padStart(5)} ps/h │ ${pct(m.holm).padStart(10)} │ ${pct(m.uncorrected).padStart(22)} │ ${pct(half.holm).padStart(10)} │ ${pct(half.uncorrected).padStart(22)}`,
    );
    progress.update(++done);
  }
  progress.done();
  const out: string[] = [
    `deploy verification quality: ${n} simulated deploys per kind and traffic level (seed ${seed}), ${((Date.now() - started) / 1000).toFixed(1)} s`,
    `traffic: hourly Poisson page-sessions with a day/night cycle (×${1 - DIURNAL_EXPOSURE} to ×${1 + DIURNAL_EXPOSURE}) and weekends at ${WEEKEND}x; affected sessions Poisson with an hourly`,
    `  factor: ${noise > 0 ? `Gamma noise (coefficient of variation ${noise}) × ` : ''}a ±${DIURNAL_RATE * 100}% diurnal swing of the rate and ${BURST_SHARE * 100}% burst hours at ${BURST_FACTOR}x; each deploy at a random hour of the week`,
    `  ('opened by a storm': the before window's last ${STORM_HOURS} h at ${STORM_FACTOR}x, then back to its mean)`,
    ...lines,
    `\ndeploys over ${many} open issues on one page (${manyN} deploys per level): share of deploys that verified any of them, the issues`,
    `  unchanged (no-op), and all ${many} at exactly half their rate (the fix test's null boundary, the least favourable case for Holm)`,
    '   level    │ no-op: Holm │ each issue alone at α  │ half: Holm │ each issue alone at α',
    ...manyLines,
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  const cell = (id: string, l: number) => cells.get(`${id}:${l}`)!;
  const median = (id: string, l: number) => quantileMs(cell(id, l).times, n, 0.5);
  const within = (id: string, l: number, ms: number) => {
    const m = median(id, l);
    return m !== null && m <= ms;
  };
  const worst = (id: string) => Math.max(...LEVELS.map((l) => cell(id, l).byLast));
  const targets = [
    [`no-op falsely verified ≤ 5% at every level`, worst('noop') <= ALPHA, `at most ${pct(worst('noop'))}`],
    [`no-op on a storm-opened issue falsely verified ≤ 5%`, worst('burst') <= ALPHA, `at most ${pct(worst('burst'))}`],
    [`stays-fixed falsely regressed ≤ 5% at every level`, worst('stays') <= ALPHA, `at most ${pct(worst('stays'))}`],
    [
      `verified real fixes falsely regressed since the fix ≤ 5%`,
      Math.max(...LEVELS.map((l) => cell('real', l).regressedAfterFix)) <= ALPHA,
      `at most ${pct(Math.max(...LEVELS.map((l) => cell('real', l).regressedAfterFix)))}`,
    ],
    [
      `real fix: median time to verified ≤ 1 h at 2000 ps/h`,
      within('real', 2000, HOUR_MS),
      showTime(median('real', 2000)),
    ],
    [
      `real fix: median time to verified ≤ 4 h at 500 ps/h`,
      within('real', 500, 4 * HOUR_MS),
      showTime(median('real', 500)),
    ],
    [
      `real fix: ≥ 95% verified by 24 h at ≥ 200 ps/h`,
      LEVELS.filter((l) => l >= 200).every((l) => cell('real', l).by24h >= 0.95),
      `lowest ${pct(Math.min(...LEVELS.filter((l) => l >= 200).map((l) => cell('real', l).by24h)))}`,
    ],
    [
      `regression: median time to regressed ≤ 1 h at 2000 ps/h`,
      within('regression', 2000, HOUR_MS),
      showTime(median('regression', 2000)),
    ],
    [
      `regression: median time to regressed ≤ 4 h at 500 ps/h`,
      within('regression', 500, 4 * HOUR_MS),
      showTime(median('regression', 500)),
    ],
    [
      `${many} unchanged open issues: ≤ 5% of no-op deploys verify any`,
      Math.max(...LEVELS.map((l) => manyRes.get(l)!.holm)) <= ALPHA,
      `at most ${pct(Math.max(...LEVELS.map((l) => manyRes.get(l)!.holm)))} (at the null boundary: at most ${pct(Math.max(...LEVELS.map((l) => manyRes.get(-l)!.holm)))})`,
    ],
  ] as const;
  // The ceiling of the time targets' looks: how many deploys the best test of the after count could decide there.
  const ceilings: string[] = [];
  for (const id of ['real', 'regression'] as const) {
    const kind = KINDS.find((k) => k.id === id)!;
    for (const level of [500, 2000]) {
      const row = LOOK_TICKS.filter((l) => ['1h', '4h', '24h'].includes(l.name)).map((l) => {
        const prev = LOOK_TICKS[LOOK_TICKS.indexOf(l) - 1];
        const alpha = alphaSpent(l.afterMs) - alphaSpent(prev.afterMs);
        return `${l.name} ${pct(powerCeiling(seed, kind, level, l.tickMs, alpha, 4000, noise)).padStart(6)} (α ${alpha.toFixed(4)})`;
      });
      // What the first hour could decide if it were given 0.02 of the 0.05 (still less than the storm share).
      row.splice(1, 0, `1h at α 0.02 ${pct(powerCeiling(seed, kind, level, HOUR_MS, 0.02, 4000, noise)).padStart(6)}`);
      ceilings.push(`  ${kind.name.padEnd(16)} ${String(level).padStart(5)} ps/h │ ${row.join(' │ ')}`);
    }
  }
  process.stdout.write(
    `\npower ceiling: share of deploys a test of the after count could decide at a look, knowing the before rate and the\ntraffic model exactly (cycles included), at that look's own alpha (4,000 simulated deploys per cell):\n${ceilings.join('\n')}\n`,
  );
  process.stdout.write(
    `\ntargets:\n${targets.map(([name, met, fig]) => `  ${met ? 'met    ' : 'NOT met'}  ${name}: ${fig}`).join('\n')}\n`,
  );
}

export async function runBench(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      deploys: { type: 'string' },
      seed: { type: 'string' },
      issues: { type: 'string' },
      pipeline: { type: 'boolean' },
      'per-kind': { type: 'string' },
      levels: { type: 'string' },
      'hour-noise': { type: 'string' },
    },
  });
  if (values.pipeline) {
    await runPipelineBench({
      perKind: Number(values['per-kind'] ?? 20),
      levels: (values.levels ?? '50,200').split(',').map(Number),
      seed: Number(values.seed ?? 42),
    });
    return;
  }
  await runPureBench(values);
}
