/**
 * Which partitions one processor should take or give up, from what every processor sees in the lease bucket. Pure:
 * each processor runs it on its own view after every heartbeat, and compare-and-set on the bucket settles races.
 */
export interface LeaseView {
  /** Partitions 0..total-1 of the stream. */
  total: number;
  /** This processor. */
  me: string;
  /** Processors whose membership key is alive (this one included or not: it is counted either way). */
  members: readonly string[];
  /** Partition → owner, for every partition whose lease is alive. */
  owners: ReadonlyMap<number, string>;
}

export interface LeasePlan {
  /** How many partitions this processor should own. */
  target: number;
  acquire: number[];
  release: number[];
}

/**
 * A fair share each: `total / members`, the remainder to the first processors in id order, so the targets of all
 * processors add up to `total` and every processor computes the same ones. Moves are bounded: a processor gives up
 * only its surplus and takes only free partitions up to its deficit, so one processor joining or leaving moves
 * about `total / members` partitions, never a reshuffle.
 */
export function planLeases(v: LeaseView): LeasePlan {
  const members = [...new Set([...v.members, v.me])].sort();
  const rank = members.indexOf(v.me);
  const target = Math.floor(v.total / members.length) + (rank < v.total % members.length ? 1 : 0);
  const mine: number[] = [];
  const free: number[] = [];
  for (let p = 0; p < v.total; p++) {
    const owner = v.owners.get(p);
    if (owner === v.me) mine.push(p);
    else if (owner === undefined) free.push(p);
  }
  if (mine.length > target) return { target, acquire: [], release: mine.slice(target) };
  // Processors joining together would all try the lowest free partition first; each starts at its own offset.
  const offset = free.length ? hash(v.me) % free.length : 0;
  const rotated = [...free.slice(offset), ...free.slice(0, offset)];
  return { target, acquire: rotated.slice(0, target - mine.length), release: [] };
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}
