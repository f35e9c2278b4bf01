import test from 'ava';
import fc from 'fast-check';
import { canonicalSelector, isSelectorVariant } from './selectors.ts';

const cases: [string, string][] = [
  ['ul>li  a', 'ul > li a'],
  ['ul > li:nth-child(3) > button.add', 'ul > li:nth-child(n) > button.add'],
  ['tr:nth-of-type(12) td:nth-last-child( 2 )', 'tr:nth-of-type(n) td:nth-last-child(n)'],
  ['li:nth-child(2n+1)', 'li:nth-child(2n+1)'],
  ['div > .css-1x2y3z > span', 'div > * > span'],
  ['button.css-k008qs-PrimaryButton', 'button'],
  ['button.sc-bdVaJa.primary', 'button.primary'],
  ['p.jsx-2848213145', 'p'],
  ['a.svelte-1a2b3c', 'a'],
  ['.Button_primary__3xYz1', '[class*="Button_primary__"]'],
  ['.card__title', '.card__title'],
  ['.css-grid > a', '.css-grid > a'],
  ['div[data-v-7ba5bd90] > a', 'div > a'],
  ['app-root[_ngcontent-ng-c123] button', 'app-root button'],
  ['[href="a.b > c"]', '[href="a.b > c"]'],
  ['.md\\:flex > a', '.md\\:flex > a'],
  ['#step-2', '#step-2'],
  ['a::before', 'a::before'],
  ['form  +  .css-1ab2c3 ~ p', 'form + * ~ p'],
  ['a, b>c', 'a, b > c'],
  ['', ''],
  ['   ', ''],
];

for (const [input, expected] of cases) {
  test(`canonical form of ${JSON.stringify(input)}`, (t) => {
    t.is(canonicalSelector(input), expected);
  });
}

test('absent selectors are the empty canonical selector', (t) => {
  t.is(canonicalSelector(undefined), '');
  t.is(canonicalSelector(null), '');
});

test('variants: list rows and generated classes are the same element; ids are not', (t) => {
  t.true(isSelectorVariant('ul > li:nth-child(1) > button', 'ul>li:nth-child(7)>button'));
  t.true(isSelectorVariant('button.css-1ab2c3', 'button.css-9zz8y7'));
  t.false(isSelectorVariant('#step-2', '#step-3'));
  t.false(isSelectorVariant('button.buy', 'button.sell'));
});

// Valid compounds: an optional type selector first, then qualifiers (as CSS requires).
const typeSel = fc.constantFrom('', 'div', 'a', 'button', 'li', 'span');
const qualifier = fc.constantFrom(
  ':nth-child(4)',
  '.x',
  '.css-1ab2c3',
  '#id',
  '[data-v-1234abcd]',
  '[type="submit"]',
  '.M_x__ab1cd',
  ':hover',
  ':nth-of-type(2)',
  '[title="a > b, c"]',
);
const compoundArb = fc
  .tuple(typeSel, fc.array(qualifier, { maxLength: 3 }))
  .map(([tag, qs]) => (tag === '' && qs.length === 0 ? 'div' : tag + qs.join('')));
const selectorArb = fc
  .array(fc.tuple(compoundArb, fc.constantFrom(' ', '>', ' > ', '+', ' ~ ', '  ')), { minLength: 1, maxLength: 4 })
  .map((parts) => parts.map(([compound, comb], i) => (i === 0 ? '' : comb) + compound).join(''));

test('property: canonicalization is idempotent', (t) => {
  fc.assert(
    fc.property(selectorArb, (s) => canonicalSelector(canonicalSelector(s)) === canonicalSelector(s)),
    { numRuns: 500 },
  );
  t.pass();
});

test('property: changing a structural index never changes the canonical form', (t) => {
  fc.assert(
    fc.property(
      selectorArb,
      fc.integer({ min: 1, max: 999 }),
      (s, n) => canonicalSelector(s.replace(/nth-child\(\d+\)/g, `nth-child(${n})`)) === canonicalSelector(s),
    ),
    { numRuns: 300 },
  );
  t.pass();
});
