import test from 'ava';
import { planLeases } from './fair-share.ts';

/** Runs every member's plan against a shared view until nothing changes; returns the owners and the moves made. */
function settle(total: number, members: string[], owners: Map<number, string>) {
  let moves = 0;
  for (let round = 0; round < 20; round++) {
    let changed = false;
    for (const me of members) {
      const plan = planLeases({ total, me, members, owners });
      for (const p of plan.release) {
        owners.delete(p);
        changed = true;
      }
      for (const p of plan.acquire) {
        if (owners.has(p)) continue; // another member's compare-and-set won
        owners.set(p, me);
        moves++;
        changed = true;
      }
    }
    if (!changed) break;
  }
  const counts = members.map((m) => [...owners.values()].filter((o) => o === m).length);
  return { counts, moves };
}

test('one processor takes all 16 partitions', (t) => {
  const { counts } = settle(16, ['a'], new Map());
  t.deepEqual(counts, [16]);
});

test('a second processor joining gets half, moving only half', (t) => {
  const owners = new Map(Array.from({ length: 16 }, (_, p) => [p, 'a'] as const));
  const { counts, moves } = settle(16, ['a', 'b'], owners);
  t.deepEqual(counts, [8, 8]);
  t.is(moves, 8);
});

test('three processors split 16 as 6/5/5 and the targets add up to the total', (t) => {
  const { counts } = settle(16, ['a', 'b', 'c'], new Map());
  t.deepEqual(counts, [6, 5, 5]);
});

test('a processor leaving: the survivors take exactly its partitions', (t) => {
  const owners = new Map<number, string>();
  settle(16, ['a', 'b', 'c', 'd'], owners);
  for (const [p, o] of owners) if (o === 'd') owners.delete(p); // its leases expired
  const { counts, moves } = settle(16, ['a', 'b', 'c'], owners);
  t.deepEqual(counts, [6, 5, 5]);
  t.is(moves, 4);
});

test('a plan never releases more than the surplus nor acquires past the target', (t) => {
  const owners = new Map(Array.from({ length: 16 }, (_, p) => [p, p < 12 ? 'a' : 'b'] as const));
  const a = planLeases({ total: 16, me: 'a', members: ['a', 'b'], owners });
  t.deepEqual(a, { target: 8, acquire: [], release: [8, 9, 10, 11] });
  const b = planLeases({ total: 16, me: 'b', members: ['a', 'b'], owners });
  t.deepEqual(b, { target: 8, acquire: [], release: [] }); // nothing is free yet: it waits for a's release
});
