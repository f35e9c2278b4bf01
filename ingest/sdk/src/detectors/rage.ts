import { now } from '../clock.ts';
import { RAGE_MAX_DISTANCE_PX, RAGE_MAX_GAP_MS, RAGE_MIN_CLICKS } from '../constants.ts';
import { pointOf, type Point } from '../coords.ts';
import { describe, ignored, signal, type Identity } from '../core.ts';
import { guard } from '../guard.ts';
import { disabledFor, isBackdrop, rageExcluded } from '../interactive.ts';

interface Burst {
  el: Element;
  /** Mutations inside this element count as a local answer to a click (a stepper's number, a toggle's state). */
  scope: Element;
  interactive: boolean;
  excluded: boolean;
  clicks: number;
  /** Clicks that got a local answer before the next click. */
  answered: number;
  /** Whether the latest click has been answered yet. */
  current: boolean;
  first: number;
  last: number;
  at: Point;
  start: Point;
  known?: Identity;
}

let burst: Burst | null = null;
let timer: ReturnType<typeof setTimeout> | undefined;

export const rageActive = (): boolean => burst !== null;

/**
 * Clicks on one element, each within RAGE_MAX_GAP_MS and RAGE_MAX_DISTANCE_PX of the previous, form
 * a burst; a burst of RAGE_MIN_CLICKS or more is judged when it ends (a click elsewhere, a pause of
 * RAGE_MAX_GAP_MS, or pagehide), so it yields one signal however long it runs.
 */
export function rageClick(e: MouseEvent, target: Element, interactive: Element | null): void {
  // detail 0: keyboard activation or a synthetic click, neither of which is a frustrated pointer.
  if (e.detail === 0) return;
  const el = interactive || target;
  const t = now();
  const p = pointOf(e);
  const b = burst;
  if (b && b.el === el && t - b.last <= RAGE_MAX_GAP_MS && Math.hypot(p.cx - b.at.cx, p.cy - b.at.cy) <= RAGE_MAX_DISTANCE_PX) {
    if (b.current) b.answered++;
    b.current = false;
    b.clicks++;
    b.last = t;
    b.at = p;
    // Identity is taken while the element is surely still there; the burst may outlive it.
    if (b.clicks === RAGE_MIN_CLICKS && !b.excluded) {
      b.known = describe(el, b.start);
      b.excluded = rageExcluded(el, target, b.known.label);
    }
  } else {
    rageEnd();
    burst = {
      el,
      scope: el.parentElement || el,
      interactive: !!interactive,
      excluded: !!disabledFor(el) || ignored(el) || isBackdrop(target, e),
      clicks: 1,
      answered: 0,
      current: false,
      first: t,
      last: t,
      at: p,
      start: p,
    };
  }
  clearTimeout(timer);
  timer = setTimeout(guard(rageEnd), RAGE_MAX_GAP_MS + 1);
}

export function rageMutations(records: MutationRecord[]): void {
  const b = burst;
  if (!b || b.current) return;
  for (const r of records) {
    if (b.scope.contains(r.target)) {
      b.current = true;
      return;
    }
  }
}

/**
 * Ends the burst and judges it. Not rage: fewer than RAGE_MIN_CLICKS; an excluded control; every
 * click answered by a change next to it (productive repetition, e.g. an unlabeled stepper); or, on
 * non-interactive content, clicks that selected text (double/triple-click to select).
 */
export function rageEnd(): void {
  const b = burst;
  burst = null;
  clearTimeout(timer);
  if (!b || b.clicks < RAGE_MIN_CLICKS || b.excluded) return;
  if (b.current) b.answered++;
  if (b.answered >= b.clicks) return;
  const sel = getSelection();
  if (!b.interactive && sel && !sel.isCollapsed) return;
  signal('rage_click', { el: b.el, known: b.known, meta: { clicks: b.clicks, ms: Math.round(b.last - b.first) } });
}
