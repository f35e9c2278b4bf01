import test from 'ava';
import fc from 'fast-check';
import { SIGNAL_CATALOG } from '../../shared/domain/signal-catalog.ts';
import {
  GLOBAL_PRIOR_FRICTION,
  PRIOR_SESSIONS,
  SITE_PRIOR_SESSIONS,
  baselineScore,
  confusionScore,
  dominantSignal,
  frictionToScore,
  overallScore,
  round1,
  scoreTrend,
  siteMeanFriction,
  weightedSignals,
  type PageWindowStats,
} from './confusion-score.ts';

const known = SIGNAL_CATALOG.map((d) => d.type);
const statsArb: fc.Arbitrary<PageWindowStats> = fc
  .record({
    sessions: fc.integer({ min: 0, max: 100_000 }),
    pageViews: fc.integer({ min: 0, max: 100_000 }),
    signals: fc.dictionary(fc.constantFrom(...known, 'mystery_signal'), fc.integer({ min: 0, max: 100_000 })),
  })
  // Every signal comes from a session, so a page with signals has at least one.
  .map((s) => ({ ...s, sessions: Object.values(s.signals).some((n) => n > 0) ? Math.max(1, s.sessions) : s.sessions }));
const priorArb = fc.option(fc.double({ min: 0, max: 50, noNaN: true }), { nil: null });

test('a healthy busy page scores low and a broken one high', (t) => {
  const healthy = confusionScore(
    { sessions: 2000, pageViews: 2600, signals: { dead_click: 15 } },
    { siteMeanFriction: null },
  );
  t.true(healthy.score < 5, `healthy ${healthy.score}`);
  const broken = confusionScore(
    { sessions: 100, pageViews: 120, signals: { rage_click: 60, dead_click: 40 } },
    { siteMeanFriction: null },
  );
  t.true(broken.score > 60, `broken ${broken.score}`);
  t.is(broken.dominantSignal, 'rage_click');
  t.is(broken.friction, (60 * 10 + 40 * 5) / 100);
});

test('one session with one rage click is shrunk toward the prior, far from 100', (t) => {
  const stats = { sessions: 1, pageViews: 1, signals: { rage_click: 1 } };
  const raw = frictionToScore(10);
  const r = confusionScore(stats, { siteMeanFriction: null });
  t.true(raw > 80, 'unshrunk it would look alarming');
  t.true(r.score < 20, `shrunk ${r.score}`);
  t.is(r.score, frictionToScore((10 + PRIOR_SESSIONS * GLOBAL_PRIOR_FRICTION) / (1 + PRIOR_SESSIONS)));
  t.is(r.friction, 10, 'the raw rate is still reported for the site mean');
});

test('a page with no sessions scores at its prior, and the prior is the global one when the site mean is null', (t) => {
  const empty = { sessions: 0, pageViews: 0, signals: {} };
  t.is(confusionScore(empty, { siteMeanFriction: null }).score, frictionToScore(GLOBAL_PRIOR_FRICTION));
  t.is(confusionScore(empty, { siteMeanFriction: 2 }).score, frictionToScore(2));
  t.is(confusionScore(empty, { siteMeanFriction: null }).friction, 0);
  t.is(confusionScore(empty, { siteMeanFriction: null }).dominantSignal, null);
});

test('property: bounded 0..100 with one decimal', (t) => {
  fc.assert(
    fc.property(statsArb, priorArb, (stats, prior) => {
      const { score } = confusionScore(stats, { siteMeanFriction: prior });
      return score >= 0 && score <= 100 && Math.round(score * 10) / 10 === score;
    }),
  );
  t.pass();
});

test('property: volume alone does not move the score (same rate, any traffic, prior at that rate)', (t) => {
  fc.assert(
    fc.property(statsArb, fc.integer({ min: 2, max: 1000 }), (stats, k) => {
      fc.pre(stats.sessions > 0);
      const scaled = {
        sessions: stats.sessions * k,
        pageViews: stats.pageViews * k,
        signals: Object.fromEntries(Object.entries(stats.signals).map(([s, n]) => [s, n * k])),
      };
      const prior = { siteMeanFriction: weightedSignals(stats.signals) / stats.sessions };
      // Equal up to float error in the last bit, which rounding to one decimal can at most turn into 0.1.
      return Math.abs(confusionScore(stats, prior).score - confusionScore(scaled, prior).score) <= 0.1;
    }),
  );
  t.pass();
});

test('property: more traffic at the same rate moves the score away from the prior, toward the page rate', (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 10 }), (sessions, rage) => {
      const small = confusionScore(
        { sessions, pageViews: sessions, signals: { rage_click: rage } },
        { siteMeanFriction: 1 },
      );
      const big = confusionScore(
        { sessions: sessions * 100, pageViews: sessions * 100, signals: { rage_click: rage * 100 } },
        { siteMeanFriction: 1 },
      );
      const target = frictionToScore((rage * 10) / sessions);
      return Math.abs(big.score - target) <= Math.abs(small.score - target) + 0.1;
    }),
  );
  t.pass();
});

test('property: one more catalogued signal never lowers the score; an unknown one changes nothing', (t) => {
  fc.assert(
    fc.property(statsArb, priorArb, fc.constantFrom(...known), (stats, prior, type) => {
      fc.pre(stats.sessions > 0);
      const before = confusionScore(stats, { siteMeanFriction: prior });
      const more = confusionScore(
        { ...stats, signals: { ...stats.signals, [type]: (stats.signals[type] ?? 0) + 1 } },
        { siteMeanFriction: prior },
      );
      const unknown = confusionScore(
        { ...stats, signals: { ...stats.signals, zz_unknown: 5 } },
        { siteMeanFriction: prior },
      );
      return (
        more.score >= before.score && unknown.score === before.score && unknown.dominantSignal === before.dominantSignal
      );
    }),
  );
  t.pass();
});

test('dominant signal is the largest weighted contribution, ties to the heavier type', (t) => {
  t.is(dominantSignal({ dead_click: 3, rage_click: 1 }), 'dead_click', '15 points beat 10');
  t.is(dominantSignal({ dead_click: 2, rage_click: 1 }), 'rage_click', '10 = 10, rage is heavier');
  t.is(dominantSignal({ navigation_loop: 5, dead_click: 4 }), 'dead_click', '20 = 20, dead is heavier');
  t.is(dominantSignal({ mystery: 1000 }), null);
  t.is(dominantSignal({ rage_click: 0 }), null);
  t.is(dominantSignal({}), null);
});

test('site mean pools pages by traffic and is itself shrunk toward the global prior', (t) => {
  t.is(siteMeanFriction([]), null);
  t.is(siteMeanFriction([{ sessions: 0, pageViews: 0, signals: {} }]), null);
  const pages: PageWindowStats[] = [
    { sessions: 900, pageViews: 900, signals: { dead_click: 90 } }, // 450 points
    { sessions: 100, pageViews: 100, signals: { rage_click: 50 } }, // 500 points
  ];
  t.is(
    siteMeanFriction(pages),
    (450 + 500 + SITE_PRIOR_SESSIONS * GLOBAL_PRIOR_FRICTION) / (1000 + SITE_PRIOR_SESSIONS),
  );
  // A brand-new site with one angry session does not become its own prior.
  const tiny = siteMeanFriction([{ sessions: 1, pageViews: 1, signals: { rage_click: 1 } }]);
  t.true(tiny !== null && tiny < 1, `tiny site mean ${tiny}`);
});

test('overall score weighs pages by sessions', (t) => {
  t.is(overallScore([]), 0);
  t.is(overallScore([{ score: 90, sessions: 0 }]), 0);
  t.is(
    overallScore([
      { score: 80, sessions: 100 },
      { score: 10, sessions: 900 },
    ]),
    17,
  );
  t.is(
    overallScore([
      { score: 33.3, sessions: 1 },
      { score: 33.4, sessions: 2 },
    ]),
    33.4,
  );
});

test('trend has a noise band of max(5 points, 10 % of the baseline)', (t) => {
  t.is(scoreTrend(90, null), 'stable');
  t.is(scoreTrend(25, 20), 'stable');
  t.is(scoreTrend(25.1, 20), 'up');
  t.is(scoreTrend(14.9, 20), 'down');
  t.is(scoreTrend(88, 80), 'stable', 'band is 8 at a baseline of 80');
  t.is(scoreTrend(88.1, 80), 'up');
  t.is(scoreTrend(71.9, 80), 'down');
});

test('property: a change under 5 points never flips the trend', (t) => {
  fc.assert(
    fc.property(
      fc.double({ min: 0, max: 100, noNaN: true }),
      fc.double({ min: -4.999, max: 4.999, noNaN: true }),
      (baseline, delta) => scoreTrend(baseline + delta, baseline) === 'stable',
    ),
  );
  t.pass();
});

test('baseline is the mean of the 7 days before today, with at least 3 of them', (t) => {
  const h = [
    { date: '2025-06-07', score: 90 }, // 8 days before: out
    { date: '2025-06-08', score: 10 },
    { date: '2025-06-10', score: 20 },
    { date: '2025-06-14', score: 30 },
    { date: '2025-06-15', score: 99 }, // today: out
  ];
  t.is(baselineScore(h, '2025-06-15'), 20);
  t.is(baselineScore(h.slice(2), '2025-06-15'), null, 'two days are not a baseline');
  t.is(baselineScore(h, 'yesterday'), null);
  t.is(
    baselineScore([...h, { date: '2025-06-14', score: 60 }], '2025-06-15'),
    30,
    'a repeated date counts once, last wins',
  );
});

test('round1 rounds half away from zero', (t) => {
  t.is(round1(0.05), 0.1);
  t.is(round1(12.34), 12.3);
  t.is(round1(-0.05), -0.1);
  t.is(round1(0), 0);
});
