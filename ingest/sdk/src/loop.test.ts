import test from 'ava';
import fc from 'fast-check';
import { NAV_LOOP_WINDOW_MS } from './constants.ts';
import { findLoop } from './loop.ts';

const views = (paths: string[], step = 5000, t0 = 1_000_000): [string, number][] =>
  paths.map((p, i) => [p, t0 + i * step]);
const end = (h: [string, number][]): number => h[h.length - 1][1];

test('A→B→A→B is a loop', (t) => {
  const h = views(['/a', '/b', '/a', '/b']);
  t.deepEqual(findLoop(h, end(h)), { cycle: ['/a', '/b'], ms: 15_000 });
});

test('A→B→C→A→B→C is a loop of three', (t) => {
  const h = views(['/x', '/a', '/b', '/c', '/a', '/b', '/c']);
  t.deepEqual(findLoop(h, end(h))?.cycle, ['/a', '/b', '/c']);
});

test('not loops: one cycle only, a broken cycle, a slow cycle', (t) => {
  for (const paths of [
    ['/a', '/b', '/a'],
    ['/a', '/b', '/c', '/a', '/b', '/d'],
    ['/a', '/b', '/c', '/d'],
  ]) {
    const h = views(paths);
    t.is(findLoop(h, end(h)), null, paths.join(' → '));
  }
  const slow = views(['/a', '/b', '/a', '/b'], NAV_LOOP_WINDOW_MS / 3 + 1);
  t.is(findLoop(slow, end(slow)), null, 'two cycles spread over more than the window');
});

const path = fc.constantFrom('/a', '/b', '/c', '/d');
/** Histories as pushPage keeps them: no page twice in a row. */
const history = fc.array(fc.tuple(path, fc.integer({ min: 100, max: 40_000 })), { maxLength: 8 }).map((steps) => {
  const h: [string, number][] = [];
  let t = 1_000_000;
  for (const [p, dt] of steps) {
    t += dt;
    if (!h.length || h[h.length - 1][0] !== p) h.push([p, t]);
  }
  return h;
});

test('a reported loop is really two repetitions of a cycle of distinct pages within the window', (t) => {
  fc.assert(
    fc.property(history, (h) => {
      if (!h.length) return true;
      const loop = findLoop(h, end(h));
      if (!loop) return true;
      const k = loop.cycle.length;
      const tail = h.slice(-2 * k).map((e) => e[0]);
      return (
        new Set(loop.cycle).size === k &&
        tail.every((p, i) => p === loop.cycle[i % k]) &&
        loop.ms <= NAV_LOOP_WINDOW_MS &&
        loop.ms === end(h) - h[h.length - 2 * k][1]
      );
    }),
  );
  t.pass();
});

test('any x→y→x→y ending inside the window is found', (t) => {
  fc.assert(
    fc.property(history, fc.integer({ min: 1, max: 14_000 }), (prefix, step) => {
      // /p and /q never occur in the prefix, so the tail is a clean cycle whatever came before.
      const h = [...prefix, ...views(['/p', '/q', '/p', '/q'], step, prefix.length ? end(prefix) + 1 : 1)];
      return findLoop(h, end(h)) !== null;
    }),
  );
  t.pass();
});
