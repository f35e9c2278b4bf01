import { guard } from './guard.ts';

/** addEventListener with the handler guarded and passive: the SDK only watches, never cancels. */
export function on<E extends Event>(target: EventTarget, type: string, fn: (e: E) => void, capture = true): void {
  target.addEventListener(type, guard(fn) as EventListener, { capture, passive: true });
}

/** The element a mutation or event is about (text nodes report their parent). */
export function elementOf(n: EventTarget | Node | null): Element | null {
  if (n instanceof Element) return n;
  return n instanceof Node ? n.parentElement : null;
}
