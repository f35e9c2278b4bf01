import test from 'ava';
import { ALPHA } from '../../shared/domain/deploy-verification.ts';
import { KINDS, catchRate } from './verify-sim.ts';

// The verify bench's own simulation (ops/bench/verify-sim.ts), same seed and cell generators as
// `npm run bench -- verify`: deterministic counts, so these figures are exactly the README's "Verification quality"
// ones and a rule change that loses regressions fails here. 1,000 deploys per cell, as the bench runs.
const SEED = 42;
const N = 1000;
const regression = KINDS.find((k) => k.id === 'regression')!;
const staysFixed = KINDS.find((k) => k.id === 'stays')!;

test('regressions (3x) are caught as often as the README says, at every traffic level', (t) => {
  // README: 80 % by the 24 h look at 50 page-sessions per hour, ≥ 99.8 % from 200, all by the 7 d look.
  const documented: Record<number, { by24h: number; byLast: number }> = {
    50: { by24h: 0.8, byLast: 0.99 },
    200: { by24h: 0.99, byLast: 0.99 },
    500: { by24h: 0.99, byLast: 0.99 },
    2000: { by24h: 0.99, byLast: 0.99 },
    5000: { by24h: 0.99, byLast: 0.99 },
  };
  for (const [level, floor] of Object.entries(documented)) {
    const got = catchRate(SEED, regression, Number(level), N);
    t.true(got.by24h >= floor.by24h, `${level} ps/h by 24 h: ${got.by24h}`);
    t.true(got.byLast >= floor.byLast, `${level} ps/h by 7 d: ${got.byLast}`);
  }
});

test('an unchanged resolved issue is called regressed at most alpha of the time, at every traffic level', (t) => {
  for (const level of [50, 200, 500, 2000, 5000]) {
    const got = catchRate(SEED, staysFixed, level, N);
    t.true(got.byLast <= ALPHA, `${level} ps/h: ${got.byLast}`);
  }
});
