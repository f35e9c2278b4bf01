import test from 'ava';
import fc from 'fast-check';
import type { EngineEvent } from './events.ts';
import { T0, sig, view } from './fixtures.test-support.ts';
import { HOUR_MS, pageWindowStart } from './time.ts';
import * as windows from './windows.ts';

test('folds views and signals into distinct sessions, views and counts by type', (t) => {
  const s = windows.createWindowState();
  windows.applyEvents(s, [
    view('a', '/checkout', T0 - 10),
    view('a', '/checkout', T0 - 9),
    view('b', '/checkout', T0 - 8),
    sig('b', '/checkout', 'rage_click', T0 - 7),
    sig('c', '/checkout', 'dead_click', T0 - 6),
    sig('c', '/checkout', 'dead_click', T0 - 5),
    sig('c', '/checkout', 'mystery', T0 - 5),
    view('d', '/other', T0 - 4),
  ]);
  t.deepEqual(windows.pageStats(s, 'site-1', '/checkout', T0), {
    sessions: 3,
    pageViews: 3,
    signals: { dead_click: 2, mystery: 1, rage_click: 1 },
  });
  t.deepEqual(windows.pageStats(s, 'site-1', '/other', T0), { sessions: 1, pageViews: 1, signals: {} });
  t.deepEqual(windows.pageStats(s, 'site-1', '/never', T0), { sessions: 0, pageViews: 0, signals: {} });
});

test('conversions, custom events and signals without a type do not count', (t) => {
  const s = windows.createWindowState();
  const update = windows.applyEvents(s, [
    { ...view('a', '/p', T0), type: 'conversion' },
    { ...view('b', '/p', T0), type: 'custom' },
    { ...view('c', '/p', T0), type: 'signal' },
  ]);
  t.is(update.pages.length, 0);
  t.deepEqual(windows.pageStats(s, 'site-1', '/p', T0), { sessions: 0, pageViews: 0, signals: {} });
});

test('sites are kept apart', (t) => {
  const s = windows.createWindowState();
  windows.applyEvents(s, [
    view('a', '/p', T0, { siteId: 'x' }),
    view('a', '/p', T0, { siteId: 'y' }),
    view('b', '/p', T0, { siteId: 'y' }),
  ]);
  t.is(windows.pageStats(s, 'x', '/p', T0).sessions, 1);
  t.is(windows.pageStats(s, 'y', '/p', T0).sessions, 2);
});

test('a session seen in several hours counts once', (t) => {
  const s = windows.createWindowState();
  windows.applyEvents(s, [view('a', '/p', T0 - 5 * HOUR_MS), view('a', '/p', T0 - 2 * HOUR_MS), view('a', '/p', T0)]);
  t.deepEqual(windows.pageStats(s, 'site-1', '/p', T0), { sessions: 1, pageViews: 3, signals: {} });
});

test('the window is the 24 hour buckets ending with the current one, future included', (t) => {
  const s = windows.createWindowState();
  const start = pageWindowStart(T0);
  t.is(start, Date.UTC(2025, 5, 14, 13, 0), '12:30 today → from 13:00 yesterday');
  windows.applyEvents(s, [
    view('in', '/p', start),
    view('out', '/p', start - 1),
    view('future', '/p', T0 + 30 * 60_000),
  ]);
  t.is(windows.pageStats(s, 'site-1', '/p', T0).sessions, 2);
  t.is(windows.pageStats(s, 'site-1', '/p', T0).pageViews, 2);
  // An hour later the 13:00 bucket has left the window.
  t.is(windows.pageStats(s, 'site-1', '/p', T0 + HOUR_MS).sessions, 1);
});

test('fold is staged: nothing changes until commit, and the staged read equals the committed one after it', (t) => {
  const s = windows.createWindowState();
  windows.applyEvents(s, [view('a', '/p', T0)]);
  const update = windows.foldEvents(s, [view('b', '/p', T0), view('a', '/p', T0), sig('c', '/p', 'rage_click', T0)]);
  t.deepEqual(
    windows.pageStats(s, 'site-1', '/p', T0),
    { sessions: 1, pageViews: 1, signals: {} },
    'uncommitted fold is invisible',
  );
  const staged = windows.readStagedPage(s, update.pages[0]!, T0);
  t.deepEqual(staged, { sessions: 3, pageViews: 3, signals: { rage_click: 1 } });
  windows.commitWindowUpdate(s, update);
  t.deepEqual(windows.pageStats(s, 'site-1', '/p', T0), staged);
});

test('a commit after an eviction that ran while the batch was staged is still exact', (t) => {
  const s = windows.createWindowState();
  windows.applyEvents(s, [view('a', '/p', T0 - 30 * HOUR_MS), view('b', '/p', T0)]);
  const update = windows.foldEvents(s, [view('a', '/p', T0), view('c', '/p', T0 - 26 * HOUR_MS)]);
  windows.evictWindows(s, T0);
  windows.commitWindowUpdate(s, update);
  t.deepEqual(windows.pageStats(s, 'site-1', '/p', T0), { sessions: 2, pageViews: 2, signals: {} });
});

test('eviction frees old buckets, reports the pages it changed and never changes a read', (t) => {
  const s = windows.createWindowState();
  windows.applyEvents(s, [
    view('a', '/old', T0 - 30 * HOUR_MS),
    view('b', '/mixed', T0 - 30 * HOUR_MS),
    view('c', '/mixed', T0),
    view('d', '/fresh', T0),
  ]);
  const before = windows.siteStats(s, 'site-1', T0);
  const changed = windows.evictWindows(s, T0);
  t.deepEqual(changed.map((c) => c.page).sort(), ['/mixed', '/old']);
  t.is(windows.getPageWindow(s, 'site-1', '/old'), undefined, 'an emptied page is dropped');
  t.is(windows.getPageWindow(s, 'site-1', '/mixed')?.hourCount, 1);
  t.deepEqual(windows.siteStats(s, 'site-1', T0), before);
  t.deepEqual(windows.evictWindows(s, T0), [], 'nothing left to evict');
  windows.evictWindows(s, T0 + 48 * HOUR_MS);
  t.is(s.sites.size, 0, 'an emptied site is dropped');
});

test('a read after an eviction is the read of the hours left, whatever the page kept from an earlier read', (t) => {
  const s = windows.createWindowState();
  windows.applyEvents(s, [view('a', '/p', T0 - 3 * HOUR_MS), view('b', '/p', T0)]);
  t.is(windows.pageStats(s, 'site-1', '/p', T0).pageViews, 2, 'read once: the page keeps its sum for this window');
  // The window at T0 + 22 h starts after the first view's hour: eviction drops it.
  windows.evictWindows(s, T0 + 22 * HOUR_MS);
  t.is(windows.pageStats(s, 'site-1', '/p', T0).pageViews, 1, 'the evicted hour is not read back from the kept sum');
});

test('siteStats lists only pages with sessions in the window', (t) => {
  const s = windows.createWindowState();
  windows.applyEvents(s, [view('a', '/old', T0 - 30 * HOUR_MS), view('b', '/now', T0)]);
  t.deepEqual([...windows.siteStats(s, 'site-1', T0).keys()], ['/now']);
});

const eventArb: fc.Arbitrary<Omit<EngineEvent, 'id'>> = fc.record({
  siteId: fc.constantFrom('s1', 's2'),
  sessionId: fc.constantFrom('a', 'b', 'c', 'd'),
  type: fc.constantFrom('page_view', 'signal', 'signal', 'conversion'),
  ts: fc.integer({ min: T0 - 30 * HOUR_MS, max: T0 + HOUR_MS }),
  page: fc.constantFrom('/a', '/b'),
  signal: fc.constantFrom('rage_click', 'dead_click', 'mystery'),
});

function readAll(s: windows.WindowState, now: number): unknown {
  return ['s1', 's2'].map((site) => ['/a', '/b'].map((page) => windows.pageStats(s, site, page, now)));
}

test('property: any order and batching of the same events gives the same windows', (t) => {
  fc.assert(
    fc.property(
      fc.array(eventArb, { maxLength: 60 }).chain((raw) => {
        const events = raw.map((e, i) => ({ ...e, id: `e${i}` }));
        return fc.tuple(
          fc.constant(events),
          fc.shuffledSubarray(events, { minLength: events.length, maxLength: events.length }),
          fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1 }),
        );
      }),
      fc.integer({ min: 0, max: 6 * HOUR_MS }),
      ([events, shuffled, sizes], later) => {
        const whole = windows.createWindowState();
        windows.applyEvents(whole, events);
        const batched = windows.createWindowState();
        let i = 0;
        for (let b = 0; i < shuffled.length; b++) {
          const size = sizes[b % sizes.length] as number;
          windows.applyEvents(batched, shuffled.slice(i, i + size));
          if (b % 3 === 2) windows.evictWindows(batched, T0 - HOUR_MS); // eviction in between never changes a later read
          i += size;
        }
        for (const now of [T0, T0 + later]) {
          if (JSON.stringify(readAll(whole, now)) !== JSON.stringify(readAll(batched, now))) return false;
        }
        return true;
      },
    ),
    { numRuns: 200 },
  );
  t.pass();
});
