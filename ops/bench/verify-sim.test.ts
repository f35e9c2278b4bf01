import test from 'ava';
import { ALPHA } from '../../shared/domain/deploy-verification.ts';
import { HOUR_MS, KINDS, LEVELS, catchRate, manyIssuesNoop, quantileMs } from './verify-sim.ts';

// Serial: the cells are CPU-bound, and one at a time each test reports within the runner's timeout.
// The verify bench's own simulation (ops/bench/verify-sim.ts), same seed and cell generators as
// `npm run bench -- verify`: deterministic counts, so these figures are exactly the README's "Verification quality"
// ones, and a rule change that loses fixes or regressions, or makes false decisions, fails here.
const SEED = 42;
const N = 1000;
const kind = (id: string) => KINDS.find((k) => k.id === id)!;

test.serial(
  'regressions (3x) are caught as often as the README says: by the 4 h look from 500 page-sessions per hour',
  (t) => {
    const documented: Record<number, { by24h: number; byLast: number; median: number | null }> = {
      50: { by24h: 0.6, byLast: 0.98, median: 24 * HOUR_MS },
      200: { by24h: 0.99, byLast: 1, median: 24 * HOUR_MS },
      500: { by24h: 1, byLast: 1, median: 4 * HOUR_MS },
      2000: { by24h: 1, byLast: 1, median: 4 * HOUR_MS },
      5000: { by24h: 1, byLast: 1, median: 4 * HOUR_MS },
    };
    for (const [level, floor] of Object.entries(documented)) {
      const got = catchRate(SEED, kind('regression'), Number(level), N);
      t.true(got.by24h >= floor.by24h, `${level} ps/h by 24 h: ${got.by24h}`);
      t.true(got.byLast >= floor.byLast, `${level} ps/h by 7 d: ${got.byLast}`);
      t.is(quantileMs(got.times, N, 0.5), floor.median, `${level} ps/h median`);
    }
  },
);

test.serial(
  'real fixes (-80 %) are verified as often and as soon as the README says: median 1 h at 2,000, 4 h at 500',
  (t) => {
    const documented: Record<number, { by24h: number; median: number }> = {
      200: { by24h: 0.98, median: 24 * HOUR_MS },
      500: { by24h: 1, median: 4 * HOUR_MS },
      2000: { by24h: 1, median: HOUR_MS },
      5000: { by24h: 1, median: HOUR_MS },
    };
    for (const [level, floor] of Object.entries(documented)) {
      const got = catchRate(SEED, kind('real'), Number(level), N);
      t.true(got.by24h >= floor.by24h, `${level} ps/h by 24 h: ${got.by24h}`);
      t.is(got.byLast, 1, `${level} ps/h by 7 d`);
      t.is(quantileMs(got.times, N, 0.5), floor.median, `${level} ps/h median`);
    }
  },
);

// One kind per test: each finishes well within the runner's timeout on a busy machine.
for (const id of ['stays', 'noop', 'burst', 'partial']) {
  test.serial(`false decisions stay at most alpha at every level: ${kind(id).name}`, (t) => {
    for (const level of LEVELS) {
      const got = catchRate(SEED, kind(id), level, N);
      t.true(got.byLast <= ALPHA, `${id} at ${level} ps/h: ${got.byLast}`);
    }
  });
}

test.serial(
  'a deploy over 20 open issues verifies any of them in at most alpha of deploys (Holm), where testing each alone would not',
  (t) => {
    for (const level of [200, 2000]) {
      t.is(manyIssuesNoop(SEED, level, 20, 100).holm, 0, `${level} ps/h, unchanged`);
      // All 20 at exactly half their rate, the fix test's null boundary: each alone is falsely verified up to alpha.
      const half = manyIssuesNoop(SEED, level, 20, 100, 0.5);
      t.true(half.holm <= ALPHA, `${level} ps/h, halved, Holm: ${half.holm}`);
      t.true(half.uncorrected > ALPHA, `${level} ps/h, halved, uncorrected: ${half.uncorrected}`);
    }
  },
);
