import { MAX_SELECTOR_CHARS } from './constants.ts';
import { rootOf } from './dom-events.ts';
import { scrub } from './scrub.ts';

/**
 * Ids that frameworks generate per render (React useId `:r1:`/`«r1»`, Radix, Headless UI, Ember,
 * MUI, uuids) change between page loads, so a selector built on them would split one broken
 * element into many issues.
 */
const GENERATED_ID = /[:«»]|^\d|^(ember|mui|radix|headlessui|react|rc)[-\d]|^__|[\da-f]{8}-[\da-f]{4}|\d{6}/i;
/** The id, then test ids (they exist to be stable), then the accessible name, qualified by tag. */
const NAMING_ATTRS = ['id', 'data-testid', 'data-test', 'data-cy', 'aria-label'];

const unique = (sel: string, el: Element): boolean => {
  try {
    const all = rootOf(el).querySelectorAll(sel);
    return all.length === 1 && all[0] === el;
  } catch {
    return false;
  }
};

/**
 * A selector that names the element by itself, if it has a stable identity (id, test id, aria-label).
 * A value that scrubbing would change (an e-mail, a long number, a typed value; quotes are the
 * author's here) is not used: it is personal data or unstable, or both.
 */
const ownSelector = (el: Element): string | null => {
  for (const a of NAMING_ATTRS) {
    const v = el.getAttribute(a);
    const id = a == 'id';
    const s = id ? `#${CSS.escape(v!)}` : `${a[0] === 'a' ? el.localName : ''}[${a}=${JSON.stringify(v)}]`;
    if (v && !(id && GENERATED_ID.test(v)) && scrub(v, false) == v && unique(s, el)) return s;
  }
  return null;
};

const segment = (el: Element): string => {
  const tag = CSS.escape(el.localName);
  const same = el.parentElement ? [...el.parentElement.children].filter((s) => s.localName === el.localName) : [el];
  return same.length > 1 ? `${tag}:nth-of-type(${same.indexOf(el) + 1})` : tag;
};

/**
 * A stable CSS selector for an element: its id, test id or aria-label when those are unique, else
 * the shortest unique `>` path, anchored at the nearest ancestor with a stable identity. Classes are
 * never used: CSS modules and utility frameworks make them change between builds. Inside a shadow root, the
 * selector is unique in that root (the host is not part of it: the bytes were needed elsewhere).
 */
export const selectorFor = (el: Element): string | undefined => {
  let path = '';
  for (let cur: Element | null = el, depth = 0; cur && depth < 12; cur = cur.parentElement, depth++) {
    // The element's own identity is the whole selector; an ancestor's anchors the path.
    const own = ownSelector(cur);
    path = (own || segment(cur)) + (path && ` > ${path}`);
    if (own || cur.localName === 'html' || unique(path, el)) break;
  }
  return path.length <= MAX_SELECTOR_CHARS && unique(path, el) ? path : undefined;
};
