import { on } from './dom-events.ts';

/**
 * What the visitor typed on this page: the latest value of each text field, lower-cased, held in
 * memory only, so that free text the SDK sends (labels, error messages) can be cleaned of it. Apps
 * echo typed values back in many places: an error that quotes the promo code, a "Search for …"
 * button, a list row.
 */
const typed = new Map<EventTarget, string>();

export const watchTyping = (): void => {
  on('input', (e) => {
    const t = e.target as HTMLInputElement;
    // Checkboxes and radios carry the author's values, not the visitor's words.
    if (e.isTrusted && typeof t.value == 'string' && !/^(checkbox|radio)$/.test(t.type))
      typed.set(t, t.value.trim().toLowerCase());
  });
};

/**
 * Free text made safe to send: every value the visitor typed (3 characters or more, in any case),
 * anything around an `@` (e-mail addresses), runs of 5 or more digits (card, phone and order numbers,
 * also when grouped by spaces, dots or dashes) and, unless `quoted` is false, quoted strings
 * (`reading 'SPRING15'`) become `…`.
 */
export const scrub = (s: string, quoted = true): string => {
  typed.forEach((v) => {
    // Each replacement shortens s (v has 3+ characters, `…` one), so this ends.
    for (let i; v.length > 2 && (i = s.toLowerCase().indexOf(v)) >= 0; )
      s = s.slice(0, i) + '…' + s.slice(i + v.length);
  });
  s = s.replace(/\S+@\S+|\d([ .-]?\d){4,}/g, '…');
  return quoted ? s.replace(/(^|\W)(["'`])[^"'`]*["'`]/g, '$1…') : s;
};
