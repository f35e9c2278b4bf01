/// <reference lib="dom.iterable" />
import { guard } from './guard.ts';

/** The document's capture listeners, also added to each open shadow root the SDK meets (see activity.ts adopt). */
export const hooks: [string, (e: Event) => void][] = [];

/**
 * addEventListener (on the document unless `target` says otherwise) with the handler guarded and passive: the SDK only watches, never cancels. On the document it
 * listens in the capture phase (before the page's handlers, so a handler that stops propagation hides nothing);
 * on the window, where the SDK reads what the page did with an event (defaultPrevented) or hears window-only
 * events, in the bubble phase, after them.
 */
export const on = <E extends Event>(type: string, fn: (e: E) => void, target: EventTarget = document): void => {
  const g = guard(fn) as (e: Event) => void;
  target.addEventListener(type, g, { capture: target != window, passive: true });
  if (target == document) hooks.push([type, g]);
};

/** The element a mutation or event is about (text nodes report their parent). */
export const elementOf = (n: EventTarget | Node | null): Element | null => {
  if (n instanceof Element) return n;
  return n instanceof Node ? n.parentElement : null;
};

/**
 * The element an event really happened on. Events leaving an open shadow root are retargeted to its host;
 * composedPath() still starts at the element inside (a closed root's inside stays hidden: the host is all there is).
 */
export const targetOf = (e: Event): Element | null => elementOf(e.composedPath()[0] || null);

/** Whether text is selected on the page. */
export const selected = (): boolean => getSelection()?.isCollapsed === false;

/** The element's tree: the document, or the open shadow root it is rendered in. */
export const rootOf = (el: Node): Document | ShadowRoot => el.getRootNode() as Document | ShadowRoot;

/** The shadow host of an element inside a shadow root (undefined in the document). */
export const hostOf = (el: Node): Element | undefined => (rootOf(el) as ShadowRoot).host;
