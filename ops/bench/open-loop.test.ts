import test from 'ava';
import fc from 'fast-check';
import {
  backlogVerdict,
  OpenLoopSchedule,
  percentile,
  rateVerdict,
  summarizeSends,
  targetLine,
  WindowSet,
  windowRows,
} from './open-loop.ts';

// The open-loop benches' pure logic, driven with made-up times: no clock, no sockets.

/** Offers every batch due by `elapsed`, as the sender does on one tick; returns the sizes sent. */
function tick(s: OpenLoopSchedule, elapsed: number, sizes: () => number): number[] {
  const sent: number[] = [];
  while (s.due(elapsed)) {
    const n = sizes();
    s.offer(n);
    sent.push(n);
  }
  return sent;
}

test('the schedule offers what the elapsed time asks for, in events, whatever the batch sizes', (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 50_000 }),
      fc.array(fc.integer({ min: 1, max: 10 }), { minLength: 1, maxLength: 50 }),
      fc.array(fc.double({ min: 0, max: 5, noNaN: true }), { minLength: 1, maxLength: 30 }),
      (rate, sizeList, steps) => {
        const s = new OpenLoopSchedule(rate);
        let i = 0;
        const sizes = () => sizeList[i++ % sizeList.length]!;
        let elapsed = 0;
        for (const step of steps) {
          elapsed += step;
          const sent = tick(s, elapsed, sizes);
          // Never behind (everything due was offered) and never ahead by more than its last batch.
          if (s.offeredEvents < elapsed * rate) return false;
          if (sent.length > 0 && s.offeredEvents - sent.at(-1)! >= elapsed * rate) return false;
        }
        return true;
      },
    ),
  );
  t.pass();
});

test('the schedule does not wait for answers: a late tick sends the whole burst that fell due', (t) => {
  const s = new OpenLoopSchedule(1000);
  t.deepEqual(
    tick(s, 0.01, () => 2),
    [2, 2, 2, 2, 2],
  );
  // Nothing sent for 90 ms (a starved event loop): the next tick owes 90 events, and says how late it is.
  t.is(s.nextDueAt(), 0.01);
  t.is(
    tick(s, 0.1, () => 3).reduce((a, b) => a + b, 0),
    90,
  );
  t.is(s.offeredEvents, 100);
  t.is(s.offeredBatches, 35);
  t.false(s.due(0.1));
});

test('a rate that is not a positive number is refused, not run as zero', (t) => {
  t.throws(() => new OpenLoopSchedule(0), { instanceOf: RangeError });
  t.throws(() => new OpenLoopSchedule(Number.NaN), { instanceOf: RangeError });
});

test('windows: per-window rates come from the samples, the backlog is accepted minus stored at each sample', (t) => {
  const w = new WindowSet(5);
  w.at(1).offeredEvents += 50_000;
  w.at(4.9).latenciesMs.push(10, 20, 30);
  w.at(7).offeredEvents += 40_000;
  w.at(7).lagsMs.push(400, 900);
  w.at(2).acceptedEvents += 49_000;
  w.at(8).acceptedEvents += 41_000;
  t.is(w.acceptedEvents(), 90_000);
  // The second sample came 1 s late: its rates use the 6 s measured, its offered rate the 5 s scheduled.
  const rows = windowRows(w, [
    { elapsedSeconds: 5, stored: 45_000, accepted: 49_000 },
    { elapsedSeconds: 11, stored: 87_000, accepted: 90_000 },
  ]);
  t.is(rows.length, 2);
  t.is(rows[0]!.offeredRate, 10_000);
  t.is(rows[0]!.acceptedRate, 9_800);
  t.is(rows[0]!.storedRate, 9_000);
  t.is(rows[0]!.backlog, 4_000);
  t.is(rows[0]!.latencyP99, 30);
  t.is(rows[0]!.lagP99, undefined);
  t.is(rows[1]!.offeredRate, 8_000);
  t.is(rows[1]!.storedRate, 7_000);
  t.is(rows[1]!.backlog, 3_000);
  t.is(rows[1]!.lagP50, 900);
  t.is(rows[1]!.probes, 2);
});

test('a short last window is divided by its own span', (t) => {
  const w = new WindowSet(5);
  w.at(11).offeredEvents += 4_000;
  const rows = windowRows(w, [
    { elapsedSeconds: 5, stored: 0, accepted: 0 },
    { elapsedSeconds: 10, stored: 0, accepted: 0 },
    { elapsedSeconds: 12, stored: 0, accepted: 4_000 },
  ]);
  t.is(rows[2]!.offeredRate, 2_000);
  t.is(rows[2]!.acceptedRate, 2_000);
});

test('rate verdict: reached only at the rate with nothing dropped or failed, and says why not', (t) => {
  const base = { targetRate: 5000, maxInFlight: 512, maxLateMs: 12 };
  t.true(rateVerdict({ ...base, achievedRate: 4990, droppedBatches: 0, failedBatches: 0 }).reached);
  const dropped = rateVerdict({ ...base, achievedRate: 3000, droppedBatches: 1234, failedBatches: 5 });
  t.false(dropped.reached);
  t.regex(dropped.text, /NOT reached: 3,000 of 5,000 events\/s accepted \(0\.60\)/);
  t.regex(dropped.text, /1,234 batches not sent because 512 requests were in flight/);
  t.regex(dropped.text, /5 requests failed/);
  // A sender at the rate that lost requests has not reached it either.
  t.false(rateVerdict({ ...base, achievedRate: 5000, droppedBatches: 0, failedBatches: 1 }).reached);
  t.notRegex(dropped.text, /ms late/);
  const both = rateVerdict({
    ...base,
    achievedRate: 3000,
    droppedBatches: 10,
    failedBatches: 0,
    maxLateMs: 300,
    senderCoreShare: 0.85,
  });
  t.regex(both.text, /10 batches not sent.*; the sender itself was up to 300 ms late; sender used 85 % of a core$/);
  const starved = rateVerdict({ ...base, achievedRate: 4000, droppedBatches: 0, failedBatches: 0, maxLateMs: 2500 });
  t.regex(starved.text, /fell behind its own schedule \(up to 2,500 ms late\)/);
});

test('backlog verdict: bounded when the end is within the bound in seconds of traffic', (t) => {
  const ok = backlogVerdict({ finalBacklog: 4000, acceptedRate: 5000, boundSeconds: 2, maxBacklog: 9000 });
  t.true(ok.bounded);
  t.is(ok.seconds, 0.8);
  t.regex(ok.text, /^bounded: 4,000 events behind at the end \(0\.8 s of traffic, bound 2 s\), at most 9,000/);
  t.false(backlogVerdict({ finalBacklog: 60_000, acceptedRate: 5000, boundSeconds: 2, maxBacklog: 60_000 }).bounded);
  // Nothing accepted but something left: not bounded.
  t.false(backlogVerdict({ finalBacklog: 1, acceptedRate: 0, boundSeconds: 2, maxBacklog: 1 }).bounded);
  t.true(backlogVerdict({ finalBacklog: 0, acceptedRate: 0, boundSeconds: 2, maxBacklog: 0 }).bounded);
});

test('target lines read met, not met or not judged, with the ratio', (t) => {
  t.is(
    targetLine({ target: 'x ≥ 0.6', measured: '7 vs 10', ratio: 0.7, met: true }),
    'target: x ≥ 0.6  measured: 7 vs 10  ratio 0.70  met',
  );
  t.is(
    targetLine({ target: 'y', measured: '1', ratio: 0.1, met: false, why: 'backlog grew' }),
    'target: y  measured: 1  ratio 0.10  not met (backlog grew)',
  );
  t.is(
    targetLine({ target: 'z', measured: 'n/a', ratio: Number.NaN, met: undefined, why: 'no /proc' }),
    'target: z  measured: n/a  not judged (no /proc)',
  );
});

test('percentile is nearest-rank and leaves its input alone', (t) => {
  const v = [5, 1, 4, 2, 3];
  t.is(percentile(v, 50), 3);
  t.is(percentile(v, 99), 5);
  t.is(percentile([], 99), 0);
  t.deepEqual(v, [5, 1, 4, 2, 3]);
});

test("send summary: latency counts from the scheduled time; the sender's lateness, connection waits and refusals without Retry-After are apart", (t) => {
  // Four requests due every 250 ms of a 1 s run at 4/s: the third issued 100 ms late, the fourth waited 50 ms for a
  // connection; answers 202, 503 + Retry-After, 503 without, and a network error.
  const part = {
    scheduled: Float64Array.from([0, 250, 500, 750]),
    issued: Float64Array.from([0, 250, 600, 750]),
    socket: Float64Array.from([1, 251, 601, 800]),
    answered: Float64Array.from([20, 260, 700, 900]),
    status: Int16Array.from([202, 503, 202, 0]),
    retryAfter: Uint8Array.from([0, 1, 0, 0]),
  };
  // A second thread the same, 125 ms later (the threads interleave), other answers.
  const later = (a: Float64Array) => a.map((v) => v + 125);
  const second = {
    ...part,
    scheduled: later(part.scheduled),
    issued: later(part.issued),
    socket: later(part.socket),
    answered: later(part.answered),
    status: Int16Array.from([202, 503, 503, 202]),
  };
  const r = summarizeSends([part, second], 8, 1);
  t.is(r.requests, 8);
  t.is(r.accepted, 4);
  t.is(r.refused, 3);
  t.is(r.refusedWithoutRetryAfter, 1);
  t.deepEqual([...r.other], [[0, 1]]);
  t.is(r.senderLateMax, 100);
  t.is(r.connectionWaitP99, 50);
  // Accepted: 20, 200 (from its scheduled 500 ms, not its issue at 600), 20, 150 (the fourth of the second part).
  t.is(r.acceptedP50, 150);
  t.is(r.acceptedP99, 200);
  t.is(r.acceptedServerP99, 150, 'from issue: 20, 100, 20, 150');
  t.is(r.acceptedP99LastThird, 150, 'of the accepted, only the one due at 875 ms is in the last third');
  // 8 requests issued over 875 ms + one interval at 8/s: on schedule.
  t.is(r.achievedRate, 8);
});
