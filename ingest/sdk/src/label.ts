import { MAX_LABEL_CHARS } from './constants.ts';

const tidy = (s: string | null | undefined): string => (s || '').replace(/\s+/g, ' ').trim().slice(0, MAX_LABEL_CHARS);

/**
 * Visible text of an element, read node by node and stopped near the cap, so labelling a huge
 * container never builds a megabyte string. Skips scripts, styles and anything editable: what a
 * user typed must never leave the page.
 */
export const textOf = (el: Element): string => {
  let out = '';
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n && out.length < 2 * MAX_LABEL_CHARS; n = walker.nextNode()) {
    const p = n.parentElement!;
    if (!p.closest('script,style,textarea,noscript,[contenteditable]')) out += ` ${n.nodeValue}`;
  }
  return tidy(out);
};

/**
 * A short accessible name: aria-label, a field's <label>, placeholder or name, title, alt, then
 * the element's own text. Never a field's value (only the author-written caption of a button input).
 */
export const labelFor = (el: Element): string | undefined => {
  const a = (n: string): string => tidy(el.getAttribute(n));
  const field = el.matches('input,select,textarea');
  const labels = (el as HTMLInputElement).labels;
  return (
    a('aria-label') ||
    (el.matches('[type=submit],[type=button],[type=reset]') && tidy((el as HTMLInputElement).value)) ||
    (field && labels?.[0] && textOf(labels[0])) ||
    (field && (a('placeholder') || a('name'))) ||
    a('title') ||
    a('alt') ||
    (!field && el.localName !== 'form' && textOf(el)) ||
    undefined
  );
};
