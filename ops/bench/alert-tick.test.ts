import test from 'ava';
import { ratios, tickWindows, valueAt, type Timeline } from './alert-tick.ts';

// A counter stored 100 events at each commit, every 200 ms from t = 0 to 20 s, except none during 10.0-11.0 s (a tick
// held the batches), then one commit of the 500 delayed.
const timeline: [number, number][] = [];
let stored = 0;
for (let t = 0; t <= 20_000; t += 10) {
  if (t % 200 === 0 && (t < 10_000 || t > 11_000)) stored += 100;
  if (t === 11_010) stored += 500;
  timeline.push([t, stored]);
}

test('valueAt reads the last value at or before a time', (t) => {
  const tl: Timeline = [
    [0, 1],
    [10, 5],
    [20, 9],
  ];
  t.is(valueAt(tl, -1), 1);
  t.is(valueAt(tl, 0), 1);
  t.is(valueAt(tl, 15), 5);
  t.is(valueAt(tl, 20), 9);
  t.is(valueAt(tl, 99), 9);
  t.is(valueAt([], 5), 0);
});

test('a tick is measured against same-length windows 1 s before and 2 s after it', (t) => {
  const w = tickWindows(timeline, { start: 10_000, end: 11_000 });
  t.is(w.seconds, 1);
  t.is(w.during, 0, 'nothing committed during the tick');
  t.is(w.before, 500, '8.0-9.0 s: five commits');
  t.is(w.after, 500, '13.0-14.0 s: the delayed ones are stored by then');
  const r = ratios([w, { seconds: 1, during: 500, before: 500, after: 500 }]);
  t.deepEqual(r.perTick, [0, 1]);
  t.is(r.total, 0.5, 'over both ticks: 500 stored where 1,000 were');
});
