import { isDeepStrictEqual } from 'node:util';
import test from 'ava';
import fc from 'fast-check';
import {
  SMALL_LIMIT,
  addOwned,
  addToCount,
  compact,
  copyMap,
  copyPairMap,
  copySet,
  forEachCount,
  forEachPair,
  getIn,
  pairCount,
  setOwned,
  sizeOf,
  updatePair,
  type CountMap,
  type OwnedMap,
  type OwnedPairMap,
  type OwnedSet,
} from './small-collections.ts';

const keyArb = fc.integer({ min: 0, max: 40 }).map((i) => `k${i}`);

test('a set stays an array up to the limit, then becomes a Set', (t) => {
  let s: OwnedSet = copySet(undefined);
  for (let i = 0; i < SMALL_LIMIT; i++) s = addOwned(s, `k${i}`);
  t.true(Array.isArray(s));
  s = addOwned(s, 'k0');
  t.is(sizeOf(s), SMALL_LIMIT, 'no duplicates');
  s = addOwned(s, 'extra');
  t.true(s instanceof Set);
  t.is(sizeOf(s), SMALL_LIMIT + 1);
});

test('property: sets, maps and pair maps behave like their native models, across upgrades', (t) => {
  fc.assert(
    fc.property(fc.array(fc.tuple(keyArb, fc.integer({ min: 0, max: 1000 })), { maxLength: 120, size: 'max' }), fc.integer({ min: 0, max: 120 }), (ops, cut) => {
      const setModel = new Set<string>();
      const mapModel = new Map<string, number>();
      const pairModel = new Map<string, [number, number]>();
      let s: OwnedSet = copySet(undefined);
      let m: OwnedMap<number> = copyMap<number>(undefined);
      let p: OwnedPairMap = copyPairMap(undefined);
      let frozen: { s: OwnedSet; m: OwnedMap<number>; p: OwnedPairMap; size: number; snapshot: string } | null = null;
      const dump = (x: { s: OwnedSet; m: OwnedMap<number>; p: OwnedPairMap }): string => {
        const pairs: unknown[] = [];
        forEachPair(x.p, (k, a, b) => pairs.push([k, a, b]));
        return JSON.stringify([[...x.s].sort(), [...x.m].sort(), pairs.sort()]);
      };
      ops.forEach(([k, v], i) => {
        if (i === cut) {
          // Copy-on-write: publish compacted copies, keep mutating fresh copies; the published ones must not change.
          const published = { s: compact(s), m: compact(m), p: compact(p) };
          frozen = { ...published, size: setModel.size, snapshot: dump(published) };
          s = copySet(frozen.s);
          m = copyMap(frozen.m);
          p = copyPairMap(frozen.p);
        }
        setModel.add(k);
        s = addOwned(s, k);
        mapModel.set(k, v);
        m = setOwned(m, k, v);
        const prev = pairModel.get(k);
        pairModel.set(k, prev === undefined ? [1, v] : [prev[0] + 1, Math.max(prev[1], v)]);
        p = updatePair(p, k, (q) => (q === undefined ? [1, v] : [q[0] + 1, Math.max(q[1], v)]));
      });
      const pairs = new Map<string, [number, number]>();
      forEachPair(p, (k, a, b) => pairs.set(k, [a, b]));
      const f = frozen as { s: OwnedSet; m: OwnedMap<number>; p: OwnedPairMap; size: number; snapshot: string } | null;
      return (
        sizeOf(s) === setModel.size &&
        [...s].every((k) => setModel.has(k)) &&
        sizeOf(m) === mapModel.size &&
        [...mapModel].every(([k, v]) => getIn(m, k) === v) &&
        pairCount(p) === pairModel.size &&
        JSON.stringify([...pairs].sort()) === JSON.stringify([...pairModel].sort()) &&
        (f === null || (sizeOf(f.s) === f.size && dump(f) === f.snapshot))
      );
    }),
    { numRuns: 300 },
  );
  t.pass();
});

test('empty collections share one frozen array; copies of it are fresh', (t) => {
  const a = compact([] as string[]);
  const b = compact([] as string[]);
  t.is(a, b);
  t.true(Object.isFrozen(a));
  const c = copySet(a);
  t.not(c, a);
  addOwned(c, 'x');
  t.is(sizeOf(a), 0);
});

test('property: a count map matches a Map, flat up to the limit, and never changes an array it was given', (t) => {
  fc.assert(
    fc.property(fc.array(fc.tuple(keyArb, fc.integer({ min: 1, max: 5 })), { maxLength: 80, size: 'max' }), (adds) => {
      let m: CountMap = Object.freeze([]);
      const model = new Map<string, number>();
      for (const [k, n] of adds) {
        const before = Array.isArray(m) ? [...m] : null;
        const given = m;
        m = addToCount(m, k, n);
        if (before !== null && !isDeepStrictEqual([...(given as readonly unknown[])], before)) return false;
        model.set(k, (model.get(k) ?? 0) + n);
        if (Array.isArray(m) !== model.size <= SMALL_LIMIT) return false;
      }
      const seen = new Map<string, number>();
      forEachCount(m, (k, n) => seen.set(k, n));
      return isDeepStrictEqual(seen, model);
    }),
  );
  t.pass();
});
