/** What counts as a click target, and which targets each click rule must leave alone. */

const INTERACTIVE =
  'a[href],button,summary,select,textarea,input,[onclick],[contenteditable=""],[contenteditable=true],' +
  '[role=button],[role=link],[role=menuitem],[role=menuitemcheckbox],[role=menuitemradio],[role=tab],' +
  '[role=checkbox],[role=radio],[role=switch],[role=option],[role=treeitem]';

/**
 * The element a click was meant for, when it looks interactive: a native control, a widget role,
 * an onclick attribute, or the outermost element of a `cursor: pointer` run (the cursor is how most
 * custom widgets tell users "click me", and it is inherited, so the run's top is the widget).
 * `tabindex` alone is not enough: scrollable regions carry tabindex=0 for keyboard users.
 */
export function interactiveFor(target: Element): Element | null {
  const el = target.closest(INTERACTIVE);
  if (el) return el;
  let found: Element | null = null;
  for (let cur: Element | null = target, d = 0; cur && cur !== document.body && d < 10; cur = cur.parentElement, d++) {
    if (getComputedStyle(cur).cursor !== 'pointer') break;
    found = cur;
  }
  return found;
}

/** The disabled control a press landed on: `disabled` (also via a disabled fieldset) or aria-disabled. */
export function disabledFor(target: Element): Element | null {
  return target.closest('button:disabled,input:disabled,select:disabled,textarea:disabled,[aria-disabled="true"]');
}

const hasClass = (el: Element, re: RegExp): boolean => re.test(`${el.getAttribute('class') || ''} ${el.id}`);

/**
 * A modal's backdrop: the ::backdrop of a <dialog> (the click lands on the dialog, outside its box),
 * an element named like one, or an unnamed full-screen fixed layer that holds a dialog. Clicking it
 * is how people dismiss modals, whether or not this modal listens.
 */
export function isBackdrop(target: Element, e: MouseEvent): boolean {
  if (target instanceof HTMLDialogElement) {
    const r = target.getBoundingClientRect();
    return e.clientX < r.left || e.clientX > r.right || e.clientY < r.top || e.clientY > r.bottom;
  }
  if (target.hasAttribute('data-backdrop') || hasClass(target, /backdrop|overlay|scrim|underlay|modal-bg/i)) return true;
  const r = target.getBoundingClientRect();
  return (
    r.width >= innerWidth * 0.9 &&
    r.height >= innerHeight * 0.9 &&
    /fixed|absolute/.test(getComputedStyle(target).position) &&
    !!target.querySelector('dialog,[role=dialog],[role=alertdialog],[aria-modal=true]')
  );
}

const NEVER_CLICK_RULES = /^(SELECT|OPTION|TEXTAREA|CANVAS|VIDEO|AUDIO|IFRAME|EMBED|OBJECT)$/;

/** Targets whose "response" happens outside the page (pickers, other tabs, apps) or is the caret itself. */
function outsideResponse(el: Element, target: Element): boolean {
  if (NEVER_CLICK_RULES.test(el.tagName) || (el instanceof HTMLElement && el.isContentEditable)) return true;
  if (el instanceof HTMLInputElement) return !/^(button|submit|reset|image)$/.test(el.type);
  if (target.closest('canvas,video,audio')) return true;
  const label = target.closest('label');
  const control = label && label.control;
  return !!control && control instanceof HTMLInputElement && control.type === 'file';
}

/**
 * dead_click exclusions: new-tab and named-window links, downloads, mailto/tel, modifier clicks
 * (open in new tab), file inputs (and labels of them), text inputs, selects, canvas and media,
 * modal backdrops.
 */
export function deadExcluded(el: Element, target: Element, e: MouseEvent): boolean {
  if (e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return true;
  if (el instanceof HTMLAnchorElement) {
    const t = el.getAttribute('target');
    if ((t && !/^_(self|top|parent)$/i.test(t)) || el.hasAttribute('download')) return true;
    if (/^(mailto|tel|sms):/i.test(el.getAttribute('href') || '')) return true;
  }
  return outsideResponse(el, target) || isBackdrop(target, e);
}

/** Captions of controls meant to be clicked many times in a row: steppers and pagers. */
const REPEATABLE_CAPTION = /^(\+|-|−|–|›|»|‹|«|→|←|>|<|\d+)$/;
const REPEATABLE_WORDS =
  /^(plus|minus|increase|decrease|increment|decrement|add one|remove one|next|prev|previous|older|newer|load more|show more|page \d+)\b/i;

/**
 * rage_click exclusions: controls whose whole point is repeated clicking (toggles, steppers,
 * pagination, carousels), fields where clicks move the caret, and canvas/media (drawing, games).
 */
export function rageExcluded(el: Element, target: Element, label: string | undefined): boolean {
  if (outsideResponse(el, target)) return true;
  if (el.matches('[aria-pressed],[aria-expanded],[aria-checked],[aria-selected],[role=switch],[role=checkbox],[role=radio],[role=tab],[role=option],summary')) return true;
  if (el.closest('[role=spinbutton],[class*=pagination],[class*=pager],[class*=carousel],[aria-roledescription=carousel],a[rel=next],a[rel=prev]')) return true;
  const nav = el.closest('nav,[role=navigation]');
  if (nav && /pag/i.test(nav.getAttribute('aria-label') || '')) return true;
  const p = el.parentElement;
  if (p && p.querySelector('input[type=number],[role=spinbutton]')) return true;
  const lab = el.closest('label');
  const control = lab && lab.control;
  if (control instanceof HTMLInputElement && /^(checkbox|radio)$/.test(control.type)) return true;
  return !!label && (REPEATABLE_CAPTION.test(label) || REPEATABLE_WORDS.test(label));
}
