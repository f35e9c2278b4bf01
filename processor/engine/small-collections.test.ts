import { isDeepStrictEqual } from 'node:util';
import test from 'ava';
import fc from 'fast-check';
import { SMALL_LIMIT, addToCount, forEachCount, type CountMap } from './small-collections.ts';

const keyArb = fc.integer({ min: 0, max: 40 }).map((i) => `k${i}`);

test('property: a count map matches a Map, flat up to the limit, and never changes an array it was given', (t) => {
  fc.assert(
    fc.property(fc.array(fc.tuple(keyArb, fc.integer({ min: 1, max: 5 })), { maxLength: 80, size: 'max' }), (adds) => {
      let m: CountMap = Object.freeze([]);
      const model = new Map<string, number>();
      for (const [k, n] of adds) {
        const before = Array.isArray(m) ? [...m] : null;
        const given = m;
        m = addToCount(m, k, n);
        if (before !== null && !isDeepStrictEqual([...(given as readonly unknown[])], before)) return false;
        model.set(k, (model.get(k) ?? 0) + n);
        if (Array.isArray(m) !== model.size <= SMALL_LIMIT) return false;
      }
      const seen = new Map<string, number>();
      forEachCount(m, (k, n) => seen.set(k, n));
      return isDeepStrictEqual(seen, model);
    }),
  );
  t.pass();
});
