import { NAV_LOOP_MAX_CYCLE, NAV_LOOP_WINDOW_MS } from './constants.ts';

/**
 * A navigation loop: the last page views are one cycle of 2..NAV_LOOP_MAX_CYCLE distinct pages,
 * seen twice in a row (A→B→A→B, A→B→C→A→B→C), with both cycles inside NAV_LOOP_WINDOW_MS.
 * `history` is oldest first, [path, epoch ms], with consecutive repeats (reloads) already collapsed.
 */
export function findLoop(
  history: readonly (readonly [string, number])[],
  t: number,
): { cycle: string[]; ms: number } | null {
  for (let k = 2; k <= NAV_LOOP_MAX_CYCLE && history.length >= 2 * k; k++) {
    const tail = history.slice(-2 * k);
    const ms = t - tail[0][1];
    const cycle = tail.slice(0, k).map((e) => e[0]);
    if (ms <= NAV_LOOP_WINDOW_MS && new Set(cycle).size === k && tail.every((e, i) => e[0] === cycle[i % k]))
      return { cycle, ms };
  }
  return null;
}
