import test from 'ava';
import fc from 'fast-check';
import { LastSeenIndex, LatestIndex, work } from './last-seen.ts';

/**
 * The index against a plain model (id → latest time and count) under any sequence of observations, evictions and
 * reads: the kept window count (`since`), the newest-first walk with a cap and the partial bucket must all agree
 * with counting the model.
 */

type Op =
  | { kind: 'observe'; id: number; t: number; n: number }
  | { kind: 'remove'; cutoff: number }
  | { kind: 'count'; cutoff: number; cap: number | undefined };

const WIDTH = 10;
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('observe' as const),
      id: fc.integer({ min: 0, max: 40 }),
      t: fc.integer({ min: 0, max: 300 }),
      n: fc.integer({ min: 1, max: 3 }),
    }),
    weight: 6,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('remove' as const), cutoff: fc.integer({ min: 0, max: 200 }) }),
    weight: 1,
  },
  // Aligned cutoffs often (the windows are), unaligned ones too (an issue's resolution time), with and without a cap.
  {
    arbitrary: fc.record({
      kind: fc.constant('count' as const),
      // A few aligned cutoffs asked again and again (the kept count is reused only at the cutoff it was kept for).
      cutoff: fc.oneof(
        fc.constantFrom(100, 150, 200),
        fc.integer({ min: 0, max: 30 }).map((b) => b * WIDTH),
        fc.integer({ min: 0, max: 310 }),
      ),
      cap: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
    }),
    weight: 4,
  },
);

for (const [name, make, counted] of [
  ['counted', () => new LastSeenIndex(WIDTH), true],
  ['uncounted (pages, elements: the time alone)', () => new LatestIndex(WIDTH), false],
] as const) {
  test(`property: every count equals a count over a plain model, in the small and large forms (${name})`, (t) => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 20, maxLength: 200, size: 'max' }), (ops) => {
        const index = make();
        const model = new Map<string, { t: number; n: number }>();
        for (const op of ops) {
          if (op.kind === 'observe') {
            const id = `id-${op.id}`;
            index.observe(id, op.t, op.n);
            const e = model.get(id);
            model.set(id, { t: Math.max(e?.t ?? -Infinity, op.t), n: (e?.n ?? 0) + op.n });
          } else if (op.kind === 'remove') {
            // As the engine evicts: whole buckets (the window starts on a bucket boundary).
            const cutoff = Math.floor(op.cutoff / WIDTH) * WIDTH;
            index.removeBefore(cutoff);
            for (const [id, e] of model) if (e.t < cutoff) model.delete(id);
          } else {
            let expected = 0;
            for (const e of model.values()) if (e.t >= op.cutoff) expected++;
            if (op.cap !== undefined) expected = Math.min(expected, op.cap);
            if (index.countSince(op.cutoff, op.cap) !== expected) return false;
          }
          if (index.size !== model.size) return false;
        }
        for (const [id, e] of model)
          if (index.latest(id) !== e.t || index.get(id)?.n !== (counted ? e.n : 0)) return false;
        return true;
      }),
      { numRuns: 300 },
    );
    t.pass();
  });
}

test('a window count asked again at the same cutoff takes no bucket walk, and stays exact as ids move', (t) => {
  const index = new LastSeenIndex(WIDTH);
  for (let i = 0; i < 100; i++) index.observe(`id-${i}`, i * 3, 1);
  t.true(index.isLarge);
  t.is(index.countSince(150), 50);
  const before = work.steps;
  t.is(index.countSince(150), 50);
  t.is(work.steps, before, 'kept, not summed again');
  index.observe('id-0', 200, 1); // moves into the window
  index.observe('new', 290, 1); // a new id in it
  index.observe('old', 10, 1); // a new id before it
  t.is(index.countSince(150), 52);
  t.is(index.countSince(150, 3), 3);
});
