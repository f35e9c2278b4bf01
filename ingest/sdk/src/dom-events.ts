import { guard } from './guard.ts';

/**
 * addEventListener with the handler guarded and passive: the SDK only watches, never cancels. On the document it
 * listens in the capture phase (before the page's handlers, so a handler that stops propagation hides nothing);
 * on the window, where the SDK reads what the page did with an event (defaultPrevented) or hears window-only
 * events, in the bubble phase, after them.
 */
export function on<E extends Event>(target: EventTarget, type: string, fn: (e: E) => void): void {
  target.addEventListener(type, guard(fn) as EventListener, { capture: target != window, passive: true });
}

/** The element a mutation or event is about (text nodes report their parent). */
export function elementOf(n: EventTarget | Node | null): Element | null {
  if (n instanceof Element) return n;
  return n instanceof Node ? n.parentElement : null;
}
