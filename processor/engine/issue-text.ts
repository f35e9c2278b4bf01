/**
 * Generated issue titles and hypotheses, from the signal type, the element's label (or selector) and the page:
 * "Visitors rage-click 'Pay now' on /checkout" / "the button likely looks active but does not respond". Kept apart
 * from the catalog so the heuristics route serves the catalog as it is.
 */

/** Longest label quoted in a title; longer labels are cut with an ellipsis so titles stay one line. */
export const MAX_LABEL_IN_TITLE = 60;

interface Phrasing {
  /** `{target}` is the quoted label, the selector, or a noun phrase; `{page}` the page path. */
  title: string;
  /** `{noun}` is what the element looks like (button, link, field…). */
  hypothesis: string;
}

const PHRASING: Readonly<Record<string, Phrasing>> = {
  rage_click: {
    title: 'Visitors rage-click {target} on {page}',
    hypothesis: 'the {noun} likely looks active but does not respond, or responds too slowly for visitors to notice',
  },
  dead_click: {
    title: 'Visitors click {target} on {page} and nothing happens',
    hypothesis:
      'the {noun} likely looks interactive but has no action behind it (missing handler, styled non-link, handler failing silently)',
  },
  disabled_element_attempt: {
    title: 'Visitors try to use the disabled {target} on {page}',
    hypothesis: 'the {noun} is likely disabled without telling visitors why or what is missing',
  },
  form_abandon: {
    title: 'Visitors abandon {target} on {page}',
    hypothesis: 'the form likely asks for too much, or a field blocks progress without a clear message',
  },
  form_restart: {
    title: 'Visitors start over on {target} on {page}',
    hypothesis: 'the form likely loses or rejects input in a way that makes visitors retype it',
  },
  error_encounter: {
    title: 'Visitors hit errors at {target} on {page}',
    hypothesis:
      'an error is likely shown after visitors act on the {noun}: a failing request, script error or unclear validation',
  },
  navigation_loop: {
    title: 'Visitors go back and forth from {page}',
    hypothesis:
      'visitors likely cannot find what they came for here and retrace their steps; labels or links may mislead',
  },
};

const UNKNOWN: Phrasing = {
  title: 'Visitors trigger {signal} on {target} on {page}',
  hypothesis: 'no hypothesis yet: the signal catalog does not describe this signal type',
};

/** Whether the engine has a title and hypothesis for `type` (the catalog test keeps this true for every type). */
export function hasPhrasing(type: string): boolean {
  return Object.hasOwn(PHRASING, type);
}

/**
 * What the element of a selector looks like, from its last compound: button, link, field, form, image, or element.
 * Used only for wording, so a rough guess is fine.
 */
export function elementNoun(selector: string): string {
  const last = (
    selector
      .trim()
      .split(/\s*[\s>+~]\s*/)
      .pop() ?? ''
  ).toLowerCase();
  const tag = /^[a-z][a-z0-9-]*/.exec(last)?.[0] ?? '';
  if (
    tag === 'button' ||
    /\[type=["']?(submit|button|reset)["']?\]/.test(last) ||
    /\[role=["']?button["']?\]/.test(last)
  )
    return 'button';
  if (tag === 'a' || /\[role=["']?link["']?\]/.test(last)) return 'link';
  if (tag === 'input' || tag === 'select' || tag === 'textarea') return 'field';
  if (tag === 'form') return 'form';
  if (tag === 'img' || tag === 'svg' || tag === 'picture') return 'image';
  if (tag === 'label') return 'label';
  if (/(^|[.#\-_])(btn|button)([\-_.:[]|$)/.test(last)) return 'button';
  return 'element';
}

function quoteLabel(label: string): string {
  const clean = label.replace(/\s+/g, ' ').trim();
  const cut = clean.length > MAX_LABEL_IN_TITLE ? `${clean.slice(0, MAX_LABEL_IN_TITLE - 1).trimEnd()}…` : clean;
  return `'${cut}'`;
}

/** What the title calls the element: its quoted label, else its selector, else a noun phrase. */
export function issueTarget(label: string | null, selector: string, signalType: string): string {
  if (label !== null && label.trim() !== '') return quoteLabel(label);
  if (selector.trim() !== '') return selector.trim();
  return signalType.startsWith('form_') ? 'a form' : 'the page';
}

/** The generated title and hypothesis of an issue. */
export function issueText(input: { signalType: string; label: string | null; selector: string; page: string }): {
  title: string;
  hypothesis: string;
} {
  const phrasing = Object.hasOwn(PHRASING, input.signalType) ? (PHRASING[input.signalType] as Phrasing) : UNKNOWN;
  const values: Record<string, string> = {
    target: issueTarget(input.label, input.selector, input.signalType),
    page: input.page,
    noun: input.selector.trim() === '' ? 'element' : elementNoun(input.selector),
    signal: input.signalType,
  };
  // One pass, so a label that happens to contain "{page}" is not substituted again.
  const fill = (template: string): string =>
    template.replace(/\{(target|page|noun|signal)\}/g, (_, name: string) => values[name] ?? '');
  return { title: fill(phrasing.title), hypothesis: fill(phrasing.hypothesis) };
}
