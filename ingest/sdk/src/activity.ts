import { MULTI_CLICK_SELECTION_MS } from './constants.ts';
import { now } from './clock.ts';
import { guard } from './guard.ts';
import { on } from './dom-events.ts';

/**
 * Kinds of page response a dead-click candidate can receive: the DOM event types watched, plus
 * 'dom' (mutation), 'nav', 'open' (window.open, alert/confirm/prompt/print, a scripted click),
 * 'net' (fetch/XHR) and 'select' (new text selection).
 */
export type ActivityKind = string;

export interface ActivityHooks {
  activity(kind: ActivityKind, target: EventTarget | null): void;
  /** Only asked for when wanted(): the observer then costs nothing on idle pages that mutate a lot. */
  mutations(records: MutationRecord[]): void;
  wanted(): boolean;
  /** The URL may have changed (history API, popstate, hashchange); returns whether the page did. */
  route(): boolean;
  /** When the last press was part of a double/triple click, whose text selection is the user's own. */
  multiClickAt(): number;
}

/**
 * Replaces obj[name] with a function that also calls `hook` after a successful call: after, so a route change
 * reads the new URL; a blocking dialog still counts, since no timer (no dead-click deadline) runs while it is open.
 */
function wrap(obj: object, name: string, hook: () => void): void {
  const o = obj as Record<string, unknown>;
  const orig = o[name];
  if (typeof orig !== 'function') return;
  const safe = guard(hook);
  o[name] = function (this: unknown, ...args: unknown[]): unknown {
    // The host's own errors must reach the host unchanged, so the original call is not guarded.
    const r = (orig as (...a: unknown[]) => unknown).apply(this, args);
    safe();
    return r;
  };
}

/** A click on a link that leaves this document (not a fragment, not javascript:). */
function leavesDocument(e: MouseEvent): boolean {
  const a = (e.target as Element).closest(
    'a[href]:not([href^="#"]):not([href^="javascript:" i])',
  ) as HTMLAnchorElement | null;
  return !!a && !(a.hash && a.href.split('#')[0] === location.href.split('#')[0]);
}

/**
 * Watches everything that counts as the page responding: DOM mutations, navigation (history API,
 * popstate, hashchange, leaving links, unprevented submits, the Navigation API), new windows and
 * dialogs, scripted clicks, fetch/XHR, scroll, a new text selection, focus moving, input/change,
 * form resets, toggles, CSS transitions and animations starting.
 */
export function watchActivity(h: ActivityHooks): void {
  const fire = (kind: ActivityKind, target: EventTarget | null = null): void => h.activity(kind, target);
  new MutationObserver(guard((records: MutationRecord[]) => h.wanted() && h.mutations(records))).observe(document, {
    childList: true,
    subtree: true,
    attributes: true,
    characterData: true,
  });
  wrap(window, 'fetch', () => fire('net'));
  wrap(XMLHttpRequest.prototype, 'send', () => fire('net'));
  // Dialogs and new windows answer a click outside the DOM; so does a scripted click on another
  // element (the usual way to start a generated download).
  for (const name of ['open', 'alert', 'confirm', 'prompt', 'print']) wrap(window, name, () => fire('open'));
  wrap(HTMLElement.prototype, 'click', () => fire('open'));
  const onHistory = (): void => {
    if (h.route()) fire('nav');
  };
  wrap(history, 'pushState', onHistory);
  wrap(history, 'replaceState', onHistory);
  on(window, 'popstate', onHistory);
  on(window, 'hashchange', () => {
    // `href="#"` lands on an empty fragment: that is the classic dead link, not a response.
    if (location.hash.length > 1) fire('nav');
    h.route();
  });
  on<MouseEvent>(window, 'click', (e) => !e.defaultPrevented && leavesDocument(e) && fire('nav'));
  on(window, 'submit', (e) => e.defaultPrevented || fire('nav'));
  const nav = (window as unknown as { navigation?: EventTarget }).navigation;
  if (nav) on<Event & { hashChange?: boolean }>(nav, 'navigate', (e) => e.hashChange || fire('nav'));

  // A reset empties the form's fields without any DOM change or input event.
  for (const type of [
    'scroll',
    'focusin',
    'input',
    'change',
    'toggle',
    'transitionstart',
    'animationstart',
    'invalid',
    'reset',
  ]) {
    on(document, type, (e) => fire(type, e.target));
  }
  on(document, 'selectionchange', () => {
    if (getSelection()?.isCollapsed === false && now() - h.multiClickAt() > MULTI_CLICK_SELECTION_MS) fire('select');
  });
}
