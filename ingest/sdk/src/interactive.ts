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
export const interactiveFor = (target: Element): Element | null => {
  let found = target.closest(INTERACTIVE);
  if (found) return found;
  for (
    let cur: Element | null = target, d = 0;
    cur && cur !== document.body && d < 10 && getComputedStyle(cur).cursor === 'pointer';
    cur = cur.parentElement, d++
  ) {
    found = cur;
  }
  return found;
};

/**
 * The disabled control a press landed on: `disabled` (also via a disabled fieldset) or aria-disabled.
 * Given the pointer, also a disabled-looking child of the target under it (`:disabled`, aria-disabled or
 * class `disabled`): Bootstrap and others give disabled controls `pointer-events: none`, so the press
 * lands on the parent. Only the target's children are looked at, which is where such a press lands
 * (a child's own children inherit `pointer-events: none`), and costs next to nothing per press.
 */
export const disabledFor = (target: Element, e?: MouseEvent): Element | null =>
  target.closest('button:disabled,input:disabled,select:disabled,textarea:disabled,[aria-disabled=true]') ||
  (e && [...target.children].find((c) => c.matches(':disabled,.disabled,[aria-disabled=true]') && within(c, e))) ||
  null;

/** Whether the pointer is inside the element's box. */
const within = (el: Element, e: MouseEvent): boolean => {
  const r = el.getBoundingClientRect();
  return e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= r.bottom;
};

/**
 * A node with nothing to read or see in it: a span or div with no text, image or icon (ripples and
 * focus rings are such), a blank text node, or a comment (Vue leaves `<!--v-if-->` where a ripple was).
 */
const bare = (n: Node): boolean =>
  n instanceof Element
    ? !n.textContent!.trim() && n.matches('span,div') && !n.querySelector('img,svg,video,canvas')
    : !(n instanceof Text && n.data.trim());

/**
 * A change inside the clicked element that only decorates the press: a ripple, focus ring or press
 * layer (a bare node) coming or going, or an attribute (class, style) changing on such a bare node.
 * New text, an icon, or any attribute of the element itself (a class or aria-* that shows a new
 * state) is a response the visitor can use.
 */
export const decorative = (r: MutationRecord, el: Element): boolean =>
  el.contains(r.target) &&
  (r.type == 'childList' ? [...r.addedNodes, ...r.removedNodes].every(bare) : r.target != el && bare(r.target));

/**
 * A modal's backdrop: the ::backdrop of a <dialog> (the click lands on the dialog, outside its box),
 * an element named like one, or an unnamed full-screen fixed layer that holds a dialog. Clicking it
 * is how people dismiss modals, whether or not this modal listens.
 */
export const isBackdrop = (target: Element, e: MouseEvent): boolean => {
  // Cheapest tests first: geometry forces a layout, which an ordinary click must not pay for.
  const r = (): DOMRect => target.getBoundingClientRect();
  if (target instanceof HTMLDialogElement) return !within(target, e);
  return (
    target.matches('[data-backdrop],[class*=backdrop],[class*=overlay],[class*=scrim]') ||
    (!!target.querySelector('dialog,[role=dialog],[role=alertdialog],[aria-modal=true]') &&
      /fixed|absolute/.test(getComputedStyle(target).position) &&
      r().width >= innerWidth * 0.9 &&
      r().height >= innerHeight * 0.9)
  );
};

/**
 * Targets whose response happens outside the page (pickers, other apps), is the caret itself, or is a
 * control's own state: selects, text fields and every input but buttons, editable content, canvas and
 * media, embedded frames, and labels of file inputs, checkboxes and radios (toggling one on and off is
 * not rage; a click on the label of a working one is answered by its change event anyway).
 */
const outsideResponse = (el: Element, target: Element): boolean => {
  const label = target.closest('label');
  const control = label?.control;
  return (
    el.matches('select,option,textarea,canvas,video,audio,iframe,embed,object,[contenteditable]') ||
    (el instanceof HTMLInputElement && !/^(button|submit|reset|image)$/.test(el.type)) ||
    !!target.closest('canvas,video,audio') ||
    (control instanceof HTMLInputElement && /^(file|checkbox|radio)$/.test(control.type))
  );
};

/**
 * dead_click exclusions: new-tab and named-window links, downloads, mailto/tel, modifier clicks
 * (open in new tab), the targets of outsideResponse, and modal backdrops.
 */
export const deadExcluded = (el: Element, target: Element, e: MouseEvent): boolean => {
  const t = el.getAttribute('target');
  return (
    e.ctrlKey ||
    e.metaKey ||
    e.shiftKey ||
    e.altKey ||
    (el.localName === 'a' &&
      ((!!t && !/^_(self|top|parent)$/i.test(t)) ||
        el.matches('[download],[href^=mailto\\:],[href^=tel\\:],[href^=sms\\:]'))) ||
    outsideResponse(el, target) ||
    isBackdrop(target, e)
  );
};

/**
 * rage_click exclusions: controls whose whole point is repeated clicking (toggles, steppers,
 * pagination, carousels), the targets of outsideResponse (caret placement, drawing, games). Controls
 * recognised only by their caption ("Next", "Show 10 more") need no rule: their answers are seen wherever
 * they land (see rage.ts rageMutations).
 */
export const rageExcluded = (el: Element, target: Element): boolean => {
  const p = el.parentNode as ParentNode | null;
  return (
    outsideResponse(el, target) ||
    el.matches(
      '[aria-pressed],[aria-expanded],[aria-checked],[aria-selected],summary,[role=tab],[role=checkbox],[role=radio],[role=switch],[role=option]',
    ) ||
    !!el.closest(
      '[role=spinbutton],[class*=paginat i],[class*=pager i],[class*=carousel i],[aria-roledescription*=carousel i],[rel=next],[rel=prev],[aria-label*=pag i]',
    ) ||
    !!p?.querySelector('input[type=number],[role=spinbutton]')
  );
};
