import { now } from '../clock.ts';
import { RAGE_MAX_DISTANCE_PX, RAGE_MAX_GAP_MS, RAGE_MIN_CLICKS } from '../constants.ts';
import { elementOf, selected } from '../dom-events.ts';
import { distance, type Point } from '../coords.ts';
import { describe, signal, type Identity } from '../core.ts';
import { guard } from '../guard.ts';
import { decorative, disabledFor, isBackdrop, rageExcluded } from '../interactive.ts';

interface Burst {
  el: Element;
  /**
   * Where a later change answers a click, besides the page's main content and live regions (see ANSWERS): the
   * element's parent (a stepper's number or a cart line re-rendered after a request).
   */
  scope: Node;
  interactive: boolean;
  excluded: boolean;
  clicks: number;
  /** Whether some click got no local answer before the next click (or the burst's end). */
  missed: boolean;
  /** Whether the latest click has been answered yet. */
  current: boolean;
  first: number;
  last: number;
  at: MouseEvent;
  start: Point;
  known?: Identity;
}

let burst: Burst | null = null;
let timer: ReturnType<typeof setTimeout> | undefined;
/**
 * True from a click until the task that dispatched it ends: mutations observed meanwhile are the page's click
 * handlers at work (the observer reports them in a microtask of that task), whatever the machine's load.
 */
let inClick = false;

export const rageActive = (): boolean => burst !== null;

/**
 * Clicks on one element, each within RAGE_MAX_GAP_MS and RAGE_MAX_DISTANCE_PX of the previous, form
 * a burst; a burst of RAGE_MIN_CLICKS or more is judged when it ends (a click elsewhere, a pause of
 * RAGE_MAX_GAP_MS, or pagehide), so it yields one signal however long it runs.
 */
export const rageClick = (e: MouseEvent, target: Element, interactive: Element | null): void => {
  const el = interactive || target;
  const t = now();
  const b = burst;
  if (b?.el === el && t - b.last <= RAGE_MAX_GAP_MS && distance(e, b.at) <= RAGE_MAX_DISTANCE_PX) {
    // Clicks on content that come in pairs (counts 1, 2, 1: the third starts a new count) are double-taps (to
    // zoom) or double-clicks; hammering runs the count up to 3 (the most Chromium counts taps to) before it restarts.
    if (!b.interactive && e.detail < b.at.detail && b.at.detail == 2) b.excluded = true;
    b.missed = b.missed || !b.current;
    b.current = false;
    b.clicks++;
    b.last = t;
    b.at = e;
    // Identity is taken while the element is surely still there; the burst may outlive it.
    if (b.clicks === RAGE_MIN_CLICKS && !b.excluded) {
      b.known = describe(el, b.start);
      b.excluded = rageExcluded(el, target);
    }
  } else {
    rageEnd();
    burst = {
      el,
      scope: el.parentNode || el,
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
  inClick = true;
  setTimeout(() => (inClick = false));
};

/** Where a change answers a click wherever the clicked element is: the main content and live regions. */
const ANSWERS = 'main,[aria-live],[role=status],[role=log],[role=alert],output';

/**
 * A change answers the latest click, unless it only decorates the press (see decorative), when it is in the
 * burst's scope or ANSWERS, or comes while the click is still being dispatched (inClick: its own handler, a
 * clicker game's score, wherever it is shown).
 */
export const rageMutations = (records: MutationRecord[]): void => {
  const b = burst;
  if (b && !b.current)
    b.current = records.some(
      (r) => (inClick || b.scope.contains(r.target) || !!elementOf(r.target)?.closest(ANSWERS)) && !decorative(r, b.el),
    );
};

/**
 * The document's route changed (a pager that pushes `/page/3` or `#/page/3`): the latest click was
 * answered. Leaving the document is not: hammering a link to a slow page is rage.
 */
export const rageNavigated = (): void => {
  if (burst) burst.current = true;
};

/**
 * Ends the burst and judges it. Not rage: fewer than RAGE_MIN_CLICKS; an excluded control; every
 * click answered (productive repetition, e.g. an unlabeled stepper); or clicks that selected text
 * (a double/triple click to select, in a clickable row too).
 */
export const rageEnd = (): void => {
  const b = burst;
  burst = null;
  clearTimeout(timer);
  if (!b || b.clicks < RAGE_MIN_CLICKS || b.excluded) return;
  if (b.current && !b.missed) return;
  if (selected() && (!b.interactive || b.clicks <= RAGE_MIN_CLICKS)) return;
  signal('rage_click', { el: b.el, known: b.known, meta: { clicks: b.clicks, ms: Math.round(b.last - b.first) } });
};
