import test from 'ava';
import { MIN_GROUP_SESSIONS, rankInsights } from './insights.ts';

const g = (key: string, confused: number, cc: number, calm: number, kc: number) => ({
  key,
  confused,
  confused_converted: cc,
  calm,
  calm_converted: kc,
});

test('insights rank by lost conversions; small groups and pages where confused convert as well give none', (t) => {
  const out = rankInsights(
    [g('/checkout', 20, 2, 20, 10), g('/small', MIN_GROUP_SESSIONS - 1, 0, 50, 50), g('/fine', 10, 5, 10, 5)],
    [g('ads', 10, 0, 10, 5)],
  );
  t.deepEqual(
    out.map((i) => [i.dimension, i.key, i.lost_conversions]),
    [
      ['page', '/checkout', 8],
      ['source', 'ads', 5],
    ],
  );
  t.is(
    out[0].text,
    'Visitors on /checkout who met friction converted at 10% against 50% for calm visitors (20 confused, 20 calm sessions): about 8 conversions lost.',
  );
});
