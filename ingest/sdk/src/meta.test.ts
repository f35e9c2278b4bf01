import test from 'ava';
import fc from 'fast-check';
import { MAX_META_JSON_CHARS } from './constants.ts';
import { cleanMeta } from './meta.ts';

test('whatever the page passes, meta fits the contract', (t) => {
  fc.assert(
    fc.property(fc.anything(), (input) => {
      const m = cleanMeta(input);
      if (m === undefined) return true;
      return (
        JSON.stringify(m).length <= MAX_META_JSON_CHARS &&
        Object.keys(m).every((k) => k.length <= 64) &&
        Object.values(m).every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v))
      );
    }),
  );
  t.pass();
});

test('primitives kept, strings cut, structures dropped', (t) => {
  const cyclic: Record<string, unknown> = { n: 1 };
  cyclic.self = cyclic;
  t.deepEqual(cleanMeta(cyclic), { n: 1 });
  t.deepEqual(cleanMeta({ s: 'x'.repeat(300), b: true, z: null, f: () => 1, nan: Number.NaN }), {
    s: 'x'.repeat(256),
    b: true,
    z: null,
  });
  t.deepEqual(cleanMeta(Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`key${i}`, 'v'.repeat(100)]))), {
    truncated: true,
  });
  t.is(cleanMeta('not an object'), undefined);
});
