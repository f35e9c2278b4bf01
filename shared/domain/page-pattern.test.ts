import test from 'ava';
import { matchesPagePattern, PagePatternSchema } from './page-pattern.ts';

test('a trailing wildcard matches the prefix and everything below it; an exact pattern only itself', (t) => {
  t.true(matchesPagePattern('/checkout*', '/checkout'));
  t.true(matchesPagePattern('/checkout*', '/checkout/pay'));
  t.false(matchesPagePattern('/checkout*', '/cart'));
  t.true(matchesPagePattern('/checkout', '/checkout'));
  t.false(matchesPagePattern('/checkout', '/checkout/pay'));
  t.true(matchesPagePattern('/*', '/anything'));
  t.true(matchesPagePattern(null, '/anything'));
  t.true(matchesPagePattern('*', '/anything'));
});

test('patterns are * or start with / and allow one wildcard, only at the end', (t) => {
  for (const ok of ['*', '/', '/*', '/checkout', '/checkout*', '/a/b/*'])
    t.true(PagePatternSchema.safeParse(ok).success, ok);
  for (const bad of ['checkout', '/*/pay', '/a**', '**', '*/a', ''])
    t.false(PagePatternSchema.safeParse(bad).success, bad);
  t.true(PagePatternSchema.safeParse(`/${'a'.repeat(2047)}`).success);
  t.false(PagePatternSchema.safeParse(`/${'a'.repeat(2048)}`).success);
});
