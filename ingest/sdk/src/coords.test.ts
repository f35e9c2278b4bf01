import test from 'ava';
import fc from 'fast-check';
import { scale } from './coords.ts';

test('scale: an integer 0..1000 for any position, undefined for an empty size', (t) => {
  fc.assert(
    fc.property(fc.double({ noNaN: false }), fc.double({ min: 0.001, max: 1e6, noNaN: true }), (v, size) => {
      const s = scale(v, size);
      return Number.isFinite(v) ? Number.isInteger(s) && s! >= 0 && s! <= 1000 : s === undefined;
    }),
  );
  t.is(scale(50, 0), undefined);
  t.is(scale(25, 100), 250);
  t.is(scale(-5, 100), 0);
  t.is(scale(150, 100), 1000);
});
