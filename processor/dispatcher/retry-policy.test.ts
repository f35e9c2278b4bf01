import test from 'ava';
import fc from 'fast-check';
import {
  afterAttempt,
  DISABLE_AFTER_FAILURES,
  DISABLE_AFTER_MS,
  JITTER,
  MAX_ATTEMPTS,
  MAX_RETRY_AFTER_MS,
  nextRetryDelayMs,
  parseRetryAfter,
  RETRY_DELAYS_MS,
} from './retry-policy.ts';

test('the schedule spans about a day and stops after the last attempt', (t) => {
  const total = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
  t.true(total > 24 * 3600_000 && total < 30 * 3600_000, `${total / 3600_000} h`);
  t.is(nextRetryDelayMs(MAX_ATTEMPTS, 0.5), null);
  t.is(nextRetryDelayMs(1, 0.5), 5000);
});

test('property: every delay is within the jitter band, and Retry-After only lengthens it (up to its cap)', (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: MAX_ATTEMPTS - 1 }),
      fc.double({ min: 0, max: 0.9999, noNaN: true }),
      fc.option(fc.integer({ min: 0, max: 48 * 3600_000 }), { nil: undefined }),
      (attempt, r, retryAfter) => {
        const d = nextRetryDelayMs(attempt, r, retryAfter)!;
        const base = RETRY_DELAYS_MS[attempt - 1]!;
        const lo = Math.floor(base * (1 - JITTER));
        const hi = Math.ceil(base * (1 + JITTER));
        if (retryAfter === undefined) return d >= lo && d <= hi;
        return d >= lo && d >= Math.min(retryAfter, MAX_RETRY_AFTER_MS) && d <= Math.max(hi, MAX_RETRY_AFTER_MS);
      },
    ),
  );
  t.pass();
});

test('Retry-After reads seconds and HTTP dates', (t) => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  t.is(parseRetryAfter('30', now), 30_000);
  t.is(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now), 60_000);
  t.is(parseRetryAfter('soon', now), undefined);
  t.is(parseRetryAfter(undefined, now), undefined);
});

test('an endpoint is disabled by 410 at once, or by 20 failures in a row spanning 5 days; a success resets the streak', (t) => {
  const t0 = 1_000_000;
  t.is(
    afterAttempt({ consecutiveFailures: 0, failingSince: null }, { ok: false, status: 410, error: 'gone' }, t0).disable,
    'the endpoint answered 410 Gone',
  );
  let h = { consecutiveFailures: 0, failingSince: null as number | null };
  for (let i = 0; i < DISABLE_AFTER_FAILURES + 5; i++) {
    const r = afterAttempt(h, { ok: false, status: 500, error: 'x' }, t0 + i * 1000);
    t.is(r.disable, null, 'many failures within minutes never disable');
    h = r;
  }
  t.is(h.failingSince, t0);
  t.truthy(afterAttempt(h, { ok: false, status: null, error: 'timeout' }, t0 + DISABLE_AFTER_MS).disable);
  t.deepEqual(afterAttempt(h, { ok: true, status: 200 }, t0 + DISABLE_AFTER_MS), {
    consecutiveFailures: 0,
    failingSince: null,
    disable: null,
  });
  const few = afterAttempt(
    { consecutiveFailures: 3, failingSince: t0 },
    { ok: false, status: 500, error: 'x' },
    t0 + 10 * DISABLE_AFTER_MS,
  );
  t.is(few.disable, null, 'a long but short streak never disables');
});
