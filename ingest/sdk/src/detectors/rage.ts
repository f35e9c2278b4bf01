import { now } from '../clock.ts';
import { RAGE_MAX_DISTANCE_PX, RAGE_MAX_GAP_MS, RAGE_MIN_CLICKS } from '../constants.ts';
import type { Point } from '../coords.ts';
import { describe, signal, type Identity } from '../core.ts';
import { guard } from '../guard.ts';
import { decorative, disabledFor, isBackdrop, rageExcluded } from '../interactive.ts';

interface Burst {
  el: Element;
  /**
   * Where a change answers a click: the element's parent (a stepper's number, a toggle's state) and the
   * elements its `aria-controls` names (the slides of a carousel, the rows of a paged table).
   */
  scope: Element[];
  interactive: boolean;
  excluded: boolean;
  clicks: number;
  /** Whether some click got no local answer before the next click (or the burst's end). */
  missed: boolean;
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
  const b = burst;
  if (
    b?.el === el &&
    t - b.last <= RAGE_MAX_GAP_MS &&
    Math.hypot(e.clientX - b.at.clientX, e.clientY - b.at.clientY) <= RAGE_MAX_DISTANCE_PX
  ) {
    b.missed = b.missed || !b.current;
    b.current = false;
    b.clicks++;
    b.last = t;
    b.at = e;
    // Identity is taken while the element is surely still there; the burst may outlive it.
    if (b.clicks === RAGE_MIN_CLICKS && !b.excluded) {
      b.known = describe(el, b.start);
      b.excluded = rageExcluded(el, target, b.known.label);
    }
  } else {
    rageEnd();
    burst = {
      el,
      scope: [el.parentElement || el].concat(
        (el.getAttribute('aria-controls') || '')
          .split(' ')
          .map((id) => document.getElementById(id)!)
          .filter(Boolean),
      ),
      interactive: !!interactive,
      // An opted-out element never gets here: start.ts drops clicks on ignored targets, and el is the target or its ancestor.
      excluded: !!disabledFor(target, e) || isBackdrop(target, e),
      clicks: 1,
      missed: false,
      current: false,
      first: t,
      last: t,
      at: e,
      start: e,
    };
  }
  clearTimeout(timer);
  timer = setTimeout(guard(rageEnd), RAGE_MAX_GAP_MS + 1);
}

/** A change in the burst's scope answers the latest click, unless it only decorates the press (see decorative). */
export function rageMutations(records: MutationRecord[]): void {
  const b = burst;
  if (b && !b.current)
    b.current = records.some((r) => b.scope.some((s) => s.contains(r.target)) && !decorative(r, b.el));
}

/**
 * The document's route changed (a pager that pushes `/page/3` or `#/page/3`): the latest click was
 * answered. Leaving the document is not: hammering a link to a slow page is rage.
 */
export function rageNavigated(): void {
  if (burst) burst.current = true;
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
  if (b.current && !b.missed) return;
  if (!b.interactive && getSelection()?.isCollapsed === false) return;
  signal('rage_click', { el: b.el, known: b.known, meta: { clicks: b.clicks, ms: Math.round(b.last - b.first) } });
}
