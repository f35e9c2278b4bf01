import { MAX_LABEL_CHARS } from './constants.ts';

const tidy = (s: string | null | undefined): string => (s || '').replace(/\s+/g, ' ').trim();

/**
 * Visible text of an element, read node by node and stopped at the cap, so labelling a huge
 * container never builds a megabyte string. Skips scripts, styles and anything editable: what a
 * user typed must never leave the page.
 */
export function textOf(el: Element, max = MAX_LABEL_CHARS): string {
  let out = '';
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n && out.length < max * 2; n = walker.nextNode()) {
    const p = n.parentElement;
    if (p && (/^(SCRIPT|STYLE|TEXTAREA|NOSCRIPT)$/.test(p.tagName) || p.isContentEditable)) continue;
    out += ` ${n.nodeValue}`;
  }
  return tidy(out).slice(0, max);
}

function isField(el: Element): el is HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement {
  return el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement;
}

/**
 * A short accessible name: aria-label, aria-labelledby, the field's <label>, placeholder, title, alt,
 * then the element's own text. Never an input's value, except the author-written caption of a
 * submit/button input.
 */
export function labelFor(el: Element): string | undefined {
  let s = tidy(el.getAttribute('aria-label'));
  const by = el.getAttribute('aria-labelledby');
  if (!s && by) {
    s = tidy(
      by
        .split(/\s+/)
        .map((id) => {
          const t = document.getElementById(id);
          return t ? textOf(t) : '';
        })
        .join(' '),
    );
  }
  if (!s && isField(el)) {
    if (el instanceof HTMLInputElement && /^(submit|button|reset)$/.test(el.type)) s = tidy(el.value);
    const lab = el.labels && el.labels[0];
    if (!s && lab) s = textOf(lab);
    if (!s) s = tidy(el.getAttribute('placeholder') || el.getAttribute('name'));
  }
  if (!s) s = tidy(el.getAttribute('title') || el.getAttribute('alt'));
  if (!s && !isField(el) && !(el instanceof HTMLElement && el.isContentEditable) && el.localName !== 'form') s = textOf(el);
  s = s.slice(0, MAX_LABEL_CHARS);
  return s || undefined;
}
