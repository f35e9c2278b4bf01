import test from 'ava';
import { scheduleTicks, singleFlight } from './tick-schedule.ts';

test('ticks never overlap: calls during a run share one next run, however many', async (t) => {
  let active = 0;
  let maxActive = 0;
  let runs = 0;
  let release!: () => void;
  const first = new Promise<void>((r) => (release = r));
  const tick = singleFlight(async () => {
    active++;
    maxActive = Math.max(maxActive, active);
    runs++;
    if (runs === 1) await first;
    active--;
  });
  const calls = [tick(), tick(), tick(), tick(), tick()];
  release();
  await Promise.all(calls);
  t.is(maxActive, 1, 'never two at once');
  t.is(runs, 2, 'the first, then one for every call made during it');
  await tick();
  t.is(runs, 3, 'a call after they ended runs at once');
});

test('a failing run rejects its callers and does not stop the next', async (t) => {
  let n = 0;
  const tick = singleFlight(async () => {
    if (++n === 1) throw new Error('boom');
  });
  await t.throwsAsync(tick(), { message: 'boom' });
  await tick();
  t.is(n, 2);
});

test('the schedule waits for a slow tick before arming the next: no overlap even when a tick outlasts the interval', async (t) => {
  let active = 0;
  let maxActive = 0;
  let runs = 0;
  const stop = scheduleTicks(
    async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      runs++;
      await new Promise((r) => setTimeout(r, 60)); // three intervals long
      active--;
    },
    20,
    () => {},
  );
  while (runs < 4) await new Promise((r) => setTimeout(r, 10));
  stop();
  t.is(maxActive, 1);
});
