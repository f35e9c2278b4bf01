import test from 'ava';
import fc from 'fast-check';
import { hasUnstorableText, measureJson, scanJson, toStorableText } from './text.ts';

test('NUL and unpaired surrogates are unstorable; pairs and ordinary text are fine', (t) => {
  for (const s of ['a\u0000b', '\ud800', 'x\udc00', '\ud83d', '\ude00\ud83d'])
    t.true(hasUnstorableText(s), JSON.stringify(s));
  for (const s of ['', 'plain', '\ud83d\ude00', 'é ü 中文', '\uFFFD']) t.false(hasUnstorableText(s), s);
  t.is(toStorableText('a\u0000\ud83d\ude00\ud800'), 'a\uFFFD\ud83d\ude00\uFFFD');
});

test('toStorableText always yields storable text and keeps storable text as it is', (t) => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary' }), (s) => {
      const out = toStorableText(s);
      return (
        !hasUnstorableText(out) &&
        (hasUnstorableText(s) || out === s) &&
        Buffer.from(out, 'utf8').toString('utf8') === out
      );
    }),
  );
  t.pass();
});

test('scanJson names the first bad field, walks 100k levels without recursion, and replaces in place on request', (t) => {
  t.deepEqual(scanJson({ a: [{ b: 'ok' }, { c: 'x\u0000' }] }, { maxDepth: 10 }), {
    path: 'a[1].c',
    message: 'contains a NUL character or an unpaired UTF-16 surrogate',
  });
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = [deep];
  t.regex(scanJson({ d: deep }, { maxDepth: 32 })!.message, /deeper than 32/);
  const v = { 'k\u0000': ['\ud800', { z: 'fine' }] };
  t.is(scanJson(v, { maxDepth: 10, replace: true }), undefined);
  t.deepEqual(v, { 'k\uFFFD': ['\uFFFD', { z: 'fine' }] });
});

test('measureJson agrees with JSON.stringify on length and depth, and stops at its limits', (t) => {
  fc.assert(
    fc.property(fc.jsonValue(), (v) => {
      const m = measureJson(v, { maxDepth: 1000, maxChars: 1e9 });
      return m.chars >= JSON.stringify(v).length - 0 && !m.tooDeep && !m.tooLong;
    }),
  );
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = [deep];
  t.true(measureJson(deep, { maxDepth: 8, maxChars: 2048 }).tooDeep);
  t.true(measureJson({ s: 'x'.repeat(3000) }, { maxDepth: 8, maxChars: 2048 }).tooLong);
  t.is(measureJson({ a: [1, { b: 2 }] }, { maxDepth: 8, maxChars: 2048 }).depth, 3);
  t.is(
    measureJson({ a: [1, { b: 'x' }] }, { maxDepth: 8, maxChars: 2048 }).chars,
    JSON.stringify({ a: [1, { b: 'x' }] }).length,
  );
});
