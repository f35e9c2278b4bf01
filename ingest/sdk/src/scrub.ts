import { on } from './dom-events.ts';

/**
 * What the visitor typed on this page: the latest value of each text field, held in memory only, so
 * that free text the SDK sends (labels, error messages) can be cleaned of it. Apps echo typed values
 * back in many places: an error that quotes the promo code, a "Search for …" button, a list row.
 */
const typed = new Map<EventTarget, string>();

export function watchTyping(): void {
  on(document, 'input', (e) => {
    const t = e.target as HTMLInputElement;
    if (e.isTrusted && typeof t.value == 'string' && !/^(checkbox|radio|range|color|file)$/.test(t.type)) typed.set(t, t.value.trim());
  });
}

/**
 * Free text made safe to send: every value the visitor typed (3 characters or more, any case, as a whole
 * word), e-mail addresses, runs of 5 or more digits (card, phone and order numbers, also when grouped
 * by spaces or dashes) and, unless `quoted` is false, quoted strings (`reading 'SPRING15'`) become `…`.
 */
export function scrub(s: string, quoted = true): string {
  typed.forEach((v) => {
    // Whole words only: a typed "art" must not eat the "Cart" in a label.
    if (v.length > 2) s = s.replace(new RegExp(`(^|\\W)${v.replace(/[$()*+.?[\\\]^{|}]/g, '\\$&')}(?!\\w)`, 'gi'), '$1…');
  });
  s = s.replace(/[\w.+-]+@[\w-]+\.[\w.-]+/g, '…').replace(/\d([ .-]?\d){4,}/g, '…');
  return quoted ? s.replace(/(^|\W)(["'`‘“«])[^"'`’”»]*["'`’”»]/g, '$1$2…$2') : s;
}
