import { guard } from './guard.ts';
import { hooks, on, selected, targetOf } from './dom-events.ts';

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
}

/**
 * Replaces obj[name] with a function that also calls `hook` (given `this`) after a successful call: after, so a route change
 * reads the new URL; a blocking dialog still counts, since no timer (no dead-click deadline) runs while it is open.
 */
export const wrap = (obj: object, name: string, hook: (self: never) => void): void => {
  const o = obj as Record<string, unknown>;
  const orig = o[name];
  if (typeof orig !== 'function') return;
  const safe = guard(hook);
  o[name] = function (this: never, ...args: unknown[]): unknown {
    // The host's own errors must reach the host unchanged, so the original call is not guarded.
    const r = (orig as (...a: unknown[]) => unknown).apply(this, args);
    safe(this);
    return r;
  };
};

let observer: MutationObserver | undefined;
const roots = new WeakSet<Node>();
/** What the mutation observer watches, in the document and in adopted shadow roots. */
const OBSERVED: MutationObserverInit = { childList: true, subtree: true, attributes: true, characterData: true };

/**
 * Makes the open shadow roots an event passed through visible like the document: the mutation observer watches
 * them, and the document's listeners hear their events that do not leave the root (change, reset, invalid,
 * toggle, scroll; submit too, though Chromium calls it composed). Events that do reach the document were heard
 * there first (capture runs from the top), so they are skipped. Called on presses and focus, which reach every component a person uses.
 */
export const adopt = (e: Event): void => {
  for (const n of e.composedPath())
    if (n instanceof ShadowRoot && !roots.has(n)) {
      roots.add(n);
      observer?.observe(n, OBSERVED);
      for (const [type, fn] of hooks) on(type, (x) => x.composedPath().includes(document) || fn(x), n);
    }
};

/** A click on a link that leaves this document (not a fragment, not javascript:). */
const leavesDocument = (e: MouseEvent): boolean => {
  const a = (e.target as Element).closest(
    'a[href]:not([href^="#"]):not([href^="javascript:" i])',
  ) as HTMLAnchorElement | null;
  return !!a && !(a.hash && a.href.split('#')[0] === location.href.split('#')[0]);
};

/**
 * Watches everything that counts as the page responding: DOM mutations, navigation (history API,
 * popstate, hashchange, leaving links, unprevented submits, the Navigation API), new windows and
 * dialogs, scripted clicks, fetch/XHR, scroll, a new text selection, focus moving, input/change,
 * form resets, toggles, CSS transitions and animations starting.
 */
export const watchActivity = (h: ActivityHooks): void => {
  const fire = (kind: ActivityKind, target: EventTarget | null = null): void => h.activity(kind, target);
  observer = new MutationObserver(guard((records: MutationRecord[]) => h.wanted() && h.mutations(records)));
  observer.observe(document, OBSERVED);
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
  on('popstate', onHistory, window);
  on(
    'hashchange',
    () => {
      // `href="#"` lands on an empty fragment: that is the classic dead link, not a response.
      if (location.hash.length > 1) fire('nav');
      h.route();
    },
    window,
  );
  on<MouseEvent>('click', (e) => !e.defaultPrevented && leavesDocument(e) && fire('nav'), window);
  on('submit', (e) => e.defaultPrevented || fire('nav'), window);
  const nav = (window as unknown as { navigation?: EventTarget }).navigation;
  if (nav) on<Event & { hashChange?: boolean }>('navigate', (e) => e.hashChange || fire('nav'), nav);

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
    on(type, (e) => fire(type, targetOf(e)));
  }
  on('selectionchange', () => {
    if (selected()) fire('select', getSelection()!.anchorNode);
  });
};
