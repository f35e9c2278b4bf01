import test from 'ava';
import { AppError } from '../shared/errors.ts';
import { createLogger } from '../shared/logger.ts';
import { LoadShedder } from './admission.ts';

const log = createLogger('silent');

function refusal(fn: () => unknown): AppError {
  const err = (() => {
    try {
      fn();
    } catch (e) {
      return e;
    }
    return undefined;
  })();
  if (!(err instanceof AppError)) throw new Error('expected a refusal');
  return err;
}

test('past the in-flight bound a request is refused with 503, Retry-After and the reason; a release admits the next', (t) => {
  const s = new LoadShedder({ maxInflight: 2, maxDelayMs: 0, log });
  const a = s.admit();
  const b = s.admit();
  const err = refusal(() => s.admit());
  t.like(err, { status: 503, code: 'unavailable', retryAfterSec: 1, retriable: true, details: { reason: 'inflight' } });
  a();
  a(); // a second release of the same request changes nothing
  const c = s.admit();
  t.throws(() => s.admit());
  b();
  c();
  t.notThrows(() => s.admit());
  s.stop();
});

test('the delay share rises by 0.1 per bound of delay (at most 0.4) per late busy interval from the second in a row, up to 0.95, falls by 0.05 per good one to 0, and refuses that share', (t) => {
  let r = 0.5;
  const s = new LoadShedder({ maxInflight: 1000, maxDelayMs: 50, log, random: () => r });
  s.stop(); // the test drives the control steps itself
  // [delay ms, utilization, share after the step]
  const steps: [number, number, number][] = [
    [5000, 1, 0], // one late interval is a stall, not overload
    [10, 1, 0],
    [60, 1, 0],
    [60, 1, 0.1], // the second in a row is: one bound late, +0.1
    [120, 1, 0.3], // two bounds late, +0.2
    [5000, 0.5, 0.25], // late but mostly idle: another process made the loop late, refusing would not help
    [5000, 0.95, 0.25], // the first late one again leaves the share
    [5000, 0.95, 0.65], // at most +0.4 a step
  ];
  for (const [delay, busy, share] of steps) {
    s.adjust(delay, busy);
    t.is(s.share, share, `after ${delay} ms at ${busy}`);
  }
  for (let i = 0; i < 20; i++) s.adjust(60, 0.99);
  t.is(s.share, 0.95);
  r = 0.94;
  const err = refusal(() => s.admit());
  t.like(err, { status: 503, retryAfterSec: 5, details: { reason: 'delay' } });
  r = 0.96;
  t.notThrows(() => s.admit());
  for (let i = 0; i < 18; i++) s.adjust(10, 1);
  t.is(s.share, 0.05);
  s.adjust(10, 1);
  t.is(s.share, 0);
  r = 0;
  t.notThrows(() => s.admit());
});

test('with the delay signal off the share never rises on its own', async (t) => {
  const s = new LoadShedder({ maxInflight: 1000, maxDelayMs: 0, log, random: () => 0 });
  // Block the loop for longer than any bound: with the signal off nothing measures it.
  const until = Date.now() + 300;
  while (Date.now() < until);
  await new Promise((r) => setTimeout(r, 300));
  t.is(s.share, 0);
  t.notThrows(() => s.admit());
});

test('a loop kept busy and late by its own work raises the share from the timer', async (t) => {
  const s = new LoadShedder({ maxInflight: 1000, maxDelayMs: 20, log });
  t.teardown(() => s.stop());
  // Busy in slices of 100 ms for about 1.5 s: the loop is late and fully used through several control intervals.
  const end = Date.now() + 1500;
  while (Date.now() < end) {
    const slice = Date.now() + 100;
    while (Date.now() < slice);
    await new Promise((r) => setImmediate(r));
  }
  t.true(s.share > 0, `share ${s.share}`);
});
