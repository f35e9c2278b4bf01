import test from 'ava';
import fc from 'fast-check';
import { representativeSample } from './sample.ts';

test('fewer items than the cap: all of them', (t) => {
  t.deepEqual(
    representativeSample([1, 2, 3], 300, () => 'a'),
    [1, 2, 3],
  );
});

test('800 items, cap 300: 300 drawn from the whole range, not the first 300', (t) => {
  const items = Array.from({ length: 800 }, (_, i) => i);
  const s = representativeSample(items, 300, () => 'a');
  t.is(s.length, 300);
  t.true(s[0] < 5);
  t.true(s[299] > 795);
  t.is(new Set(s).size, 300);
});

test('property: at most cap distinct items of the input, each group within one of its exact share', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom('rage_click', 'dead_click', 'disabled_element_attempt'), { maxLength: 1200 }),
      fc.integer({ min: 1, max: 500 }),
      (groups, cap) => {
        const items = groups.map((g, i) => ({ g, i }));
        const s = representativeSample(items, cap, (x) => x.g);
        if (s.length !== Math.min(cap, items.length)) return false;
        if (new Set(s.map((x) => x.i)).size !== s.length) return false;
        if (items.length <= cap) return true;
        for (const g of new Set(groups)) {
          const exact = (groups.filter((x) => x === g).length * cap) / items.length;
          const got = s.filter((x) => x.g === g).length;
          if (Math.abs(got - exact) >= 1) return false;
        }
        return true;
      },
    ),
  );
  t.pass();
});
