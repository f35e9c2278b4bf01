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

/** A shedder on a clock the test moves, its steps driven by the test. */
function shedder(maxInflight: number, targetMs: number) {
  const clock = { t: 0 };
  const s = new LoadShedder({ maxInflight, targetMs, log, now: () => clock.t, timer: false });
  return { s, clock };
}

/** Admits up to `n` requests (fewer when refused); returns their releases and how many were refused. */
function admitMany(s: LoadShedder, n: number): { releases: (() => void)[]; refused: number } {
  const releases: (() => void)[] = [];
  let refused = 0;
  for (let i = 0; i < n; i++) {
    try {
      releases.push(s.admit());
    } catch {
      refused++;
    }
  }
  return { releases, refused };
}

test('with no latency target the limit is INGEST_MAX_INFLIGHT: past it 503, Retry-After and the reason; a release admits the next', (t) => {
  const { s } = shedder(2, 0);
  const a = s.admit();
  const b = s.admit();
  const err = refusal(() => s.admit());
  t.like(err, {
    status: 503,
    code: 'unavailable',
    retryAfterSec: 1,
    retriable: true,
    details: { reason: 'overloaded' },
  });
  a();
  a(); // a second release of the same request changes nothing
  const c = s.admit();
  t.throws(() => s.admit());
  b();
  c();
  t.notThrows(() => s.admit());
  // Steps change nothing without a target, however slow the requests.
  s.step();
  t.is(s.limit, 2);
});

/** One step in which `n` requests (at most the limit) are admitted and answered after `ms`, on a loop busy `busy`. */
function slowStep(s: LoadShedder, clock: { t: number }, n: number, ms: number, busy = 1): number {
  const { releases, refused } = admitMany(s, n);
  clock.t += ms;
  for (const r of releases) r();
  s.step(busy);
  return refused;
}

test('latency over the target on a busy loop for a second step running sets the limit to the requests in flight × target / latency (× 0.5 at the least), never below 4', (t) => {
  const { s, clock } = shedder(256, 50);
  t.is(s.limit, 64, 'a process starts at 64 (at most the ceiling)');
  slowStep(s, clock, 64, 100);
  t.is(s.limit, 64, 'one step over is a stall');
  slowStep(s, clock, 64, 100);
  t.is(s.limit, 32, '64 in flight at twice the target: 32');
  t.is(slowStep(s, clock, 40, 62.5), 8, 'past the limit the rest is refused');
  t.is(s.limit, 25, '32 in flight at 1.25 × the target');
  t.is(s.share, 0.2, 'the share refused over the step');
  for (let i = 0; i < 10; i++) slowStep(s, clock, s.limit, 5000);
  t.is(s.limit, 4);
});

test('a slow process binds at once: the limit comes from the requests it had in flight, not from the limit it never reached', (t) => {
  const { s, clock } = shedder(256, 50);
  slowStep(s, clock, 10, 200);
  slowStep(s, clock, 10, 200);
  t.is(s.limit, 5);
});

test('the oldest request still in flight counts even when nothing was answered in the step', (t) => {
  const { s, clock } = shedder(256, 50);
  const { releases } = admitMany(s, 64);
  clock.t += 400;
  t.is(s.step(1), 400, 'nothing answered: the age of the oldest request is the signal');
  clock.t += 100;
  t.is(s.step(1), 500);
  t.is(s.limit, 32);
  for (const r of releases) r();
});

test('under the target with the limit nearly reached it grows by 10 % a step up to INGEST_MAX_INFLIGHT; Retry-After follows the share refused', (t) => {
  const { s, clock } = shedder(80, 50);
  const grow = () => {
    const { releases, refused } = admitMany(s, s.limit + 10);
    clock.t += 5;
    for (const r of releases) r();
    s.step(1);
    return refused;
  };
  t.is(grow(), 10);
  t.is(s.limit, 70);
  grow();
  t.is(s.limit, 77);
  grow();
  t.is(s.limit, 80);
  grow();
  t.is(s.limit, 80, 'never past the ceiling');
  // All refused but a few: Retry-After rises to 5 s.
  const { releases } = admitMany(s, 80);
  const many = admitMany(s, 720);
  t.is(many.refused, 720);
  clock.t += 5;
  for (const r of releases) r();
  s.step(1);
  t.is(s.share, 0.9);
  t.like(
    refusal(() => {
      for (let i = 0; i < 81; i++) s.admit();
    }),
    { retryAfterSec: 5 },
  );
});

test('an overload that passes: the limit comes back to what the load needs and nothing is refused', (t) => {
  const { s, clock } = shedder(256, 50);
  // Overload: every request slow, the limit down to its floor.
  for (let i = 0; i < 6; i++) {
    const { releases } = admitMany(s, 300);
    clock.t += 1000;
    for (const r of releases) r();
    s.step(1);
  }
  t.is(s.limit, 4);
  // Then 40 requests at a time answered within 5 ms: the limit climbs back past 40 and refusals stop.
  let refused = 0;
  for (let i = 0; i < 40; i++) {
    const step = admitMany(s, 40);
    refused = step.refused;
    clock.t += 5;
    for (const r of step.releases) r();
    s.step(1);
  }
  t.is(refused, 0);
  t.true(s.limit >= 40, `limit ${s.limit}`);
});

test('latency over the target while the loop is mostly idle (the stream or the machine is slow, not this process) refuses nothing more: the limit grows towards INGEST_MAX_INFLIGHT if it is needed', (t) => {
  const { s, clock } = shedder(100, 50);
  t.is(slowStep(s, clock, 64, 500, 0.3), 0);
  t.is(s.limit, 70);
  slowStep(s, clock, 64, 500, 0.3);
  t.is(s.limit, 77);
  // The same steps with the loop busy are this process's overload.
  slowStep(s, clock, 77, 500);
  slowStep(s, clock, 77, 500);
  t.is(s.limit, 38);
});
