import { isDeepStrictEqual } from 'node:util';
import test from 'ava';
import fc from 'fast-check';
import * as hours from './hour-records.ts';
import { SMALL_LIMIT } from './small-collections.ts';

type Model = Map<number, { views: number; signals: Map<string, number> }>;

const opArb = fc.oneof(
  fc.record({
    kind: fc.constant('add' as const),
    hour: fc.integer({ min: 0, max: 6 }),
    views: fc.integer({ min: 0, max: 3 }),
    // Up to 40 types: an hour crosses SMALL_LIMIT types both in one add and over several.
    signals: fc.array(
      fc.tuple(
        fc.integer({ min: 0, max: 39 }).map((i) => `t${i}`),
        fc.integer({ min: 1, max: 4 }),
      ),
      { maxLength: 20 },
    ),
  }),
  fc.record({ kind: fc.constant('evict' as const), cutoff: fc.integer({ min: 0, max: 7 }) }),
);

function read(h: hours.HourRecords): Model {
  const out: Model = new Map();
  hours.forEachHour(h, (hour, views, each) => {
    const signals = new Map<string, number>();
    each((type, n) => signals.set(type, n));
    out.set(hour, { views, signals });
  });
  return out;
}

test('property: hour records match a Map of hours, inline up to SMALL_LIMIT types, and never change the shared empty array', (t) => {
  fc.assert(
    fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => {
      let h: hours.HourRecords = hours.NO_HOURS;
      const model: Model = new Map();
      for (const op of ops) {
        if (op.kind === 'add') {
          const signals = new Map<string, number>();
          for (const [type, n] of op.signals) signals.set(type, (signals.get(type) ?? 0) + n);
          h = hours.addToHour(h, op.hour, op.views, signals);
          let m = model.get(op.hour);
          if (m === undefined) model.set(op.hour, (m = { views: 0, signals: new Map() }));
          m.views += op.views;
          for (const [type, n] of signals) m.signals.set(type, (m.signals.get(type) ?? 0) + n);
        } else {
          const before = [...model.keys()].some((hour) => hour < op.cutoff);
          if (hours.holdsBefore(h, op.cutoff) !== before) return false;
          h = hours.hoursFrom(h, op.cutoff);
          for (const hour of [...model.keys()]) if (hour < op.cutoff) model.delete(hour);
        }
        if (!isDeepStrictEqual(read(h), model) || hours.hourCount(h) !== model.size) return false;
        // The form: inline pairs while an hour has at most SMALL_LIMIT types, one Map past that; exact-size array.
        let slots = 0;
        for (const m of model.values()) slots += m.signals.size > SMALL_LIMIT ? 4 : 3 + 2 * m.signals.size;
        if (h.length !== slots) return false;
      }
      return hours.NO_HOURS.length === 0;
    }),
  );
  t.pass();
});
