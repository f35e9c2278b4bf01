import type { ActivityKind } from '../activity.ts';
import { DEAD_WINDOW_MS, RAGE_MIN_CLICKS } from '../constants.ts';
import type { Point } from '../coords.ts';
import { guard } from '../guard.ts';
import { ignored, signal } from '../core.ts';
import { elementOf, selected } from '../dom-events.ts';
import { deadExcluded, decorative, disabledFor } from '../interactive.ts';

interface Candidate {
  el: Element;
  clicks: number;
  point: Point;
}

let pending: Candidate[] = [];

export const deadPending = (): number => pending.length;

/**
 * A click on something interactive opens a candidate; any page response within DEAD_WINDOW_MS
 * closes it. More clicks on the same element while it is open are counted on it, so a rage burst
 * on a dead button gives one dead_click, not one per click; if they selected text in it, they were a
 * double or triple click to select, and give none.
 */
export const deadClick = (e: MouseEvent, target: Element, el: Element | null): void => {
  if (!el || disabledFor(target, e) || deadExcluded(el, target, e)) return;
  const same = pending.find((c) => c.el === el);
  if (same) return void same.clicks++;
  const c: Candidate = { el, clicks: 1, point: e };
  pending.push(c);
  // One timer per candidate: there are seldom more than one or two open at a time.
  setTimeout(
    guard(() => {
      if (!pending.includes(c)) return;
      pending = pending.filter((x) => x !== c);
      // Two or three clicks that left text selected were a double or triple click to select it.
      if (c.clicks > 1 && c.clicks <= RAGE_MIN_CLICKS && selected()) return;
      signal('dead_click', { el, point: e, meta: { clicks: c.clicks, window_ms: DEAD_WINDOW_MS } });
    }),
    DEAD_WINDOW_MS,
  );
};

/**
 * The page responded. Focus and CSS animation count only when they are not on the clicked element
 * itself: browsers focus a clicked button, and press effects animate it, without the page doing anything.
 */
export const deadActivity = (kind: ActivityKind, target: EventTarget | null): void => {
  if (!pending.length) return;
  pending = pending.filter(
    (c) =>
      /^(focusin|select)|start$/.test(kind) &&
      target instanceof Node &&
      (c.el.contains(target) || target.contains(c.el)),
  );
};

/**
 * DOM changes close every candidate, except changes inside the candidate's own element that only
 * decorate the press (ripples, focus rings: see decorative) and changes in opted-out regions.
 */
export const deadMutations = (records: MutationRecord[]): void => {
  pending = pending.filter((c) => records.every((r) => decorative(r, c.el) || ignored(elementOf(r.target))));
};

/** The page is going away: whatever was pending may have been answered by the next page. */
export const deadReset = (): void => {
  pending = [];
};
