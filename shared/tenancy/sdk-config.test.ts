import test from 'ava';
import fc from 'fast-check';
import { ignoredSelector, readSdkConfig, DEFAULT_SDK_CONFIG } from './sdk-config.ts';

test('a recorded selector is ignored when it is, or passes through, an ignored selector', (t) => {
  const ignore = ['#pay', '[data-testid="promo"]', 'button[aria-label="Close"]'];
  t.true(ignoredSelector('#pay', ignore));
  t.true(ignoredSelector('#pay > span', ignore), 'inside the ignored element');
  t.true(ignoredSelector('main > #pay', ignore));
  t.true(ignoredSelector('body > div:nth-of-type(2) > #pay > svg > path', ignore));
  t.true(ignoredSelector('[data-testid="promo"]>a', ignore), 'spacing around > does not matter');
  t.true(ignoredSelector('button[aria-label="Close"]', ignore));
  t.false(ignoredSelector('#payment', ignore), 'a longer id is another element');
  t.false(ignoredSelector('#checkout > #pay-later', ignore));
  t.false(ignoredSelector('div#pay', ignore), 'compared as recorded, not as CSS');
  t.false(ignoredSelector('#pay', []));
  t.false(ignoredSelector('#pay', ['  ']), 'a blank selector ignores nothing');
});

test('ignoring never depends on what surrounds the ignored part of the path', (t) => {
  const seg = fc.stringMatching(/^[#a-z][a-z0-9-]{0,8}$/);
  fc.assert(
    fc.property(fc.array(seg, { maxLength: 4 }), seg, fc.array(seg, { maxLength: 4 }), (before, ignored, after) => {
      return ignoredSelector([...before, ignored, ...after].join(' > '), [ignored]);
    }),
  );
  t.pass();
});

test('a stored config gains the defaults of fields added later', (t) => {
  t.deepEqual(readSdkConfig({ sample_rate: 0.5 }), { ...DEFAULT_SDK_CONFIG, sample_rate: 0.5 });
  t.deepEqual(readSdkConfig(null), DEFAULT_SDK_CONFIG);
});
