/**
 * Chooses at most `cap` of `items` so that they represent all of them (pure): each group (signal type) keeps its
 * share of the cap (largest remainders), and inside a group the picks are spread evenly over the group's order
 * (time), so neither the first nor the last signals dominate. Deterministic: the same input draws the same points.
 */
export function representativeSample<T>(items: readonly T[], cap: number, groupOf: (t: T) => string): T[] {
  if (items.length <= cap) return [...items];
  if (cap <= 0) return [];
  const groups = new Map<string, T[]>();
  for (const it of items) {
    const g = groupOf(it);
    const list = groups.get(g);
    if (list) list.push(it);
    else groups.set(g, [it]);
  }
  // Largest-remainder apportionment of the cap over the groups (ties by name, so the result is stable).
  const quotas = [...groups.entries()].map(([name, list]) => {
    const exact = (list.length * cap) / items.length;
    return { name, list, take: Math.floor(exact), rest: exact - Math.floor(exact) };
  });
  let left = cap - quotas.reduce((a, q) => a + q.take, 0);
  for (const q of [...quotas].sort((a, b) => b.rest - a.rest || a.name.localeCompare(b.name))) {
    if (left === 0) break;
    q.take++;
    left--;
  }
  const out: T[] = [];
  for (const q of quotas) {
    // Evenly spaced positions: the centre of each of `take` equal slices of the group.
    for (let i = 0; i < q.take; i++) out.push(q.list[Math.floor(((i + 0.5) * q.list.length) / q.take)]);
  }
  return out;
}
