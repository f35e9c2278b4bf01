import test from 'ava';
import fc from 'fast-check';
import { MAX_BACKOFF_MS, MAX_RETRY_AFTER_MS } from './constants.ts';
import { parseRetryAfter, retryDelay } from './transport.ts';

test('Retry-After in delta-seconds; anything else means "not given"', (t) => {
  t.is(parseRetryAfter('1'), 1000);
  t.is(parseRetryAfter('0'), 0);
  t.is(parseRetryAfter('2.5'), 2500);
  for (const h of [null, '', '-3', 'soon', 'Wed, 21 Oct 2015 07:28:00 GMT']) t.is(parseRetryAfter(h), null, String(h));
});

test('with Retry-After, the wait is at least that long and at most 10% longer (capped)', (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 10 }),
      fc.integer({ min: 0, max: 2 * MAX_RETRY_AFTER_MS }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      (attempt, ra, rand) => {
        const d = retryDelay(attempt, ra, rand);
        const honoured = Math.min(ra, MAX_RETRY_AFTER_MS);
        return d >= honoured && d <= honoured * 1.1;
      },
    ),
  );
  t.pass();
});

test('without it, exponential backoff from 1 s, half jittered, capped at 30 s', (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 20 }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      (attempt, rand) => {
        const base = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (attempt - 1));
        const d = retryDelay(attempt, null, rand);
        return d >= base / 2 && d <= base;
      },
    ),
  );
  t.is(retryDelay(1, null, 0), 500);
  t.is(retryDelay(3, null, 0.999999) <= 4000, true);
});
