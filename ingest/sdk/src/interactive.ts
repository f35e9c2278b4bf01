/** What counts as a click target, and which targets each click rule must leave alone. */

const INTERACTIVE =
  'a[href],button,summary,select,textarea,input,[onclick],[contenteditable],[role=button],[role=link],' +
  '[role^=menuitem],[role=tab],[role=checkbox],[role=radio],[role=switch],[role=option],[role=treeitem]';

/**
 * The element a click was meant for, when it looks interactive: a native control, a widget role,
 * an onclick attribute, or the outermost element of a `cursor: pointer` run (the cursor is how most
 * custom widgets tell users "click me", and it is inherited, so the run's top is the widget).
 * `tabindex` alone is not enough: scrollable regions carry tabindex=0 for keyboard users.
 */
export function interactiveFor(target: Element): Element | null {
  let found = target.closest(INTERACTIVE);
  if (found) return found;
  for (let cur: Element | null = target, d = 0; cur && cur !== document.body && d < 10 && getComputedStyle(cur).cursor === 'pointer'; cur = cur.parentElement, d++) {
    found = cur;
  }
  return found;
}

/** The disabled control a press landed on: `disabled` (also via a disabled fieldset) or aria-disabled. */
export const disabledFor = (target: Element): Element | null =>
  target.closest('button:disabled,input:disabled,select:disabled,textarea:disabled,[aria-disabled=true]');

/**
 * A modal's backdrop: the ::backdrop of a <dialog> (the click lands on the dialog, outside its box),
 * an element named like one, or an unnamed full-screen fixed layer that holds a dialog. Clicking it
 * is how people dismiss modals, whether or not this modal listens.
 */
export function isBackdrop(target: Element, e: MouseEvent): boolean {
  // Cheapest tests first: geometry forces a layout, which an ordinary click must not pay for.
  const r = (): DOMRect => target.getBoundingClientRect();
  if (target instanceof HTMLDialogElement) return e.clientX < r().left || e.clientX > r().right || e.clientY < r().top || e.clientY > r().bottom;
  return (
    target.matches('[data-backdrop],[class*=backdrop],[class*=overlay],[class*=scrim]') ||
    (!!target.querySelector('dialog,[role=dialog],[role=alertdialog],[aria-modal=true]') &&
      /fixed|absolute/.test(getComputedStyle(target).position) &&
      r().width >= innerWidth * 0.9 &&
      r().height >= innerHeight * 0.9)
  );
}

/**
 * Targets whose response happens outside the page (pickers, other apps) or is the caret itself:
 * selects, text fields and every input but buttons, editable content, canvas and media, embedded
 * frames, and labels of file inputs.
 */
function outsideResponse(el: Element, target: Element): boolean {
  const label = target.closest('label');
  const control = label && label.control;
  return (
    el.matches('select,option,textarea,canvas,video,audio,iframe,embed,object,[contenteditable]') ||
    (el instanceof HTMLInputElement && !/^(button|submit|reset|image)$/.test(el.type)) ||
    !!target.closest('canvas,video,audio') ||
    (control instanceof HTMLInputElement && control.type === 'file')
  );
}

/**
 * dead_click exclusions: new-tab and named-window links, downloads, mailto/tel, modifier clicks
 * (open in new tab), the targets of outsideResponse, and modal backdrops.
 */
export function deadExcluded(el: Element, target: Element, e: MouseEvent): boolean {
  const t = el.getAttribute('target');
  return (
    e.ctrlKey ||
    e.metaKey ||
    e.shiftKey ||
    e.altKey ||
    (el.localName === 'a' && ((!!t && !/^_(self|top|parent)$/i.test(t)) || el.matches('[download],[href^=mailto\\:],[href^=tel\\:],[href^=sms\\:]'))) ||
    outsideResponse(el, target) ||
    isBackdrop(target, e)
  );
}

/** Captions of controls meant to be clicked many times in a row: steppers and pagers. */
const REPEATABLE =
  /^([-+−–›»‹«→←<>]|\d+|(plus|minus|(in|de)cre(ase|ment)|(add|remove) one|next|prev|older|newer|(load|show) more|page \d+)\b.*)$/i;

/**
 * rage_click exclusions: controls whose whole point is repeated clicking (toggles, steppers,
 * pagination, carousels), the targets of outsideResponse (caret placement, drawing, games).
 */
export function rageExcluded(el: Element, target: Element, label: string | undefined): boolean {
  const p = el.parentElement;
  const lab = el.closest('label');
  const control = lab && lab.control;
  return (
    outsideResponse(el, target) ||
    el.matches('[aria-pressed],[aria-expanded],[aria-checked],[aria-selected],[role=switch],[role=checkbox],[role=radio],[role=tab],[role=option],summary') ||
    !!el.closest(
      '[role=spinbutton],[class*=pagination],[class*=pager],[class*=carousel],[aria-roledescription=carousel],[rel=next],[rel=prev],' +
        'nav[aria-label*=pag i],[role=navigation][aria-label*=pag i]',
    ) ||
    !!(p && p.querySelector('input[type=number],[role=spinbutton]')) ||
    (control instanceof HTMLInputElement && /^(checkbox|radio)$/.test(control.type)) ||
    (!!label && REPEATABLE.test(label))
  );
}
