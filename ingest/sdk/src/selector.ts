import { MAX_SELECTOR_CHARS } from './constants.ts';
import { scrub } from './scrub.ts';

/**
 * Ids that frameworks generate per render (React useId `:r1:`/`«r1»`, Radix, Headless UI, Ember,
 * MUI, uuids) change between page loads, so a selector built on them would split one broken
 * element into many issues.
 */
const GENERATED_ID = /[:«»]|^\d|^(ember|mui|radix|headlessui|react|rc)[-\d]|^__|[\da-f]{8}-[\da-f]{4}|\d{6}/i;
/** Test ids first (they exist to be stable), then the accessible name, qualified by tag. */
const NAMING_ATTRS = ['data-testid', 'data-test', 'data-cy', 'aria-label'];

const quote = (v: string): string => JSON.stringify(v);

function unique(sel: string, el: Element): boolean {
  try {
    const all = document.querySelectorAll(sel);
    return all.length === 1 && all[0] === el;
  } catch {
    return false;
  }
}

/**
 * A selector that names the element by itself, if it has a stable identity (id, test id, aria-label).
 * A value that scrubbing would change (an e-mail, a long number, a typed value; quotes are the
 * author's here) is not used: it is personal data or unstable, or both.
 */
function ownSelector(el: Element): string | null {
  const id = el.id;
  if (id && !GENERATED_ID.test(id) && scrub(id, false) == id) {
    const s = `#${CSS.escape(id)}`;
    if (unique(s, el)) return s;
  }
  for (const a of NAMING_ATTRS) {
    const v = el.getAttribute(a);
    const s = `${a[0] === 'a' ? el.localName : ''}[${a}=${quote(v!)}]`;
    if (v && scrub(v, false) == v && unique(s, el)) return s;
  }
  return null;
}

function segment(el: Element): string {
  const tag = CSS.escape(el.localName);
  const p = el.parentElement;
  if (!p) return tag;
  let n = 0;
  let i = 0;
  for (const sib of Array.from(p.children)) {
    if (sib.localName === el.localName) {
      n++;
      if (sib === el) i = n;
    }
  }
  return n > 1 ? `${tag}:nth-of-type(${i})` : tag;
}

/**
 * A stable CSS selector for an element: its id, test id or aria-label when those are unique, else
 * the shortest unique `>` path, anchored at the nearest ancestor with a stable identity. Classes are
 * never used: CSS modules and utility frameworks make them change between builds.
 */
export function selectorFor(el: Element): string | undefined {
  const own = ownSelector(el);
  if (own) return own;
  let path = '';
  let cur: Element | null = el;
  for (let depth = 0; cur && depth < 12; depth++) {
    if (depth > 0) {
      const anchor = ownSelector(cur);
      if (anchor) {
        path = `${anchor} > ${path}`;
        break;
      }
    }
    path = path ? `${segment(cur)} > ${path}` : segment(cur);
    if (cur.localName === 'html' || unique(path, el)) break;
    cur = cur.parentElement;
  }
  return path.length <= MAX_SELECTOR_CHARS && unique(path, el) ? path : undefined;
}
