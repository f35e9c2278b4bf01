import test from 'ava';
import { ALPHA } from '../../shared/domain/deploy-verification.ts';
import { HOUR_MS, KINDS, LEVELS, catchRate, manyIssuesNoop, quantileMs } from './verify-sim.ts';

// The verify bench's own simulation (ops/bench/verify-sim.ts), same seed and cell generators as
// `npm run bench -- verify`: deterministic counts, so these figures are exactly the README's "Verification quality"
// ones, and a rule change that loses fixes or regressions, or makes false decisions, fails here.
const SEED = 42;
const N = 1000;
const kind = (id: string) => KINDS.find((k) => k.id === id)!;

test('regressions (3x) are caught as often as the README says, and decided by the 24 h look from 200 page-sessions per hour', (t) => {
  const documented: Record<number, { by24h: number; byLast: number }> = {
    50: { by24h: 0.54, byLast: 0.98 },
    200: { by24h: 0.92, byLast: 0.99 },
    500: { by24h: 0.97, byLast: 0.99 },
    2000: { by24h: 0.98, byLast: 0.99 },
    5000: { by24h: 0.98, byLast: 0.99 },
  };
  for (const [level, floor] of Object.entries(documented)) {
    const got = catchRate(SEED, kind('regression'), Number(level), N);
    t.true(got.by24h >= floor.by24h, `${level} ps/h by 24 h: ${got.by24h}`);
    t.true(got.byLast >= floor.byLast, `${level} ps/h by 7 d: ${got.byLast}`);
    if (Number(level) >= 200) t.is(quantileMs(got.times, N, 0.5), 24 * HOUR_MS);
  }
});

test('real fixes (-80 %) are verified as often as the README says', (t) => {
  const documented: Record<number, number> = { 200: 0.85, 500: 0.93, 2000: 0.94, 5000: 0.96 };
  for (const [level, floor] of Object.entries(documented)) {
    const got = catchRate(SEED, kind('real'), Number(level), N);
    t.true(got.by24h >= floor, `${level} ps/h by 24 h: ${got.by24h}`);
    t.is(got.byLast, 1, `${level} ps/h by 7 d`);
  }
});

test('false decisions stay at most alpha at every level: unchanged resolved issues, no-op deploys, storm-opened issues', (t) => {
  for (const level of LEVELS) {
    for (const id of ['stays', 'noop', 'burst', 'partial']) {
      const got = catchRate(SEED, kind(id), level, N);
      t.true(got.byLast <= ALPHA, `${id} at ${level} ps/h: ${got.byLast}`);
    }
  }
});

test('a deploy over 20 open issues verifies any of them in at most alpha of deploys (Holm), where testing each alone would not', (t) => {
  for (const level of [200, 2000]) {
    t.is(manyIssuesNoop(SEED, level, 20, 100).holm, 0, `${level} ps/h, unchanged`);
    // All 20 at exactly half their rate, the fix test's null boundary: each alone is falsely verified up to alpha.
    const half = manyIssuesNoop(SEED, level, 20, 100, 0.5);
    t.true(half.holm <= ALPHA, `${level} ps/h, halved, Holm: ${half.holm}`);
    t.true(half.uncorrected > ALPHA, `${level} ps/h, halved, uncorrected: ${half.uncorrected}`);
  }
});
