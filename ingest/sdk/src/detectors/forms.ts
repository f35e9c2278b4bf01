import { actions } from '../actions.ts';
import { now } from '../clock.ts';
import { ERROR_CLICK_ATTRIBUTION_MS, FORM_RESTART_MIN_CLEARED } from '../constants.ts';
import { describe, signal, state, type Identity } from '../core.ts';
import { wrap } from '../activity.ts';
import { on, targetOf } from '../dom-events.ts';

type Field = HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;

interface FormState {
  /** Fields the user filled; kept when emptied again, since "filled then found empty" is what a restart is. */
  filled: Set<Field>;
  lastField: string;
  /** When it was last sent (submit, or a request right after a click in it), clock.now(); 0: not sent. */
  sentAt: number;
  restart: { how: string; cleared: number } | null;
  done: boolean;
  /** Taken when the form starts: an SPA may have removed it, and changed the route, by the time it is abandoned. */
  known: Identity;
  page: string;
}

const forms = new Map<Element, FormState>();
let lastFormClick: { form: Element; t: number } | null = null;

/** Fields whose emptiness we can judge; toggles, files, hidden and search inputs are not "filling in a form". */
export const fieldOf = (t: EventTarget | null): Field | null =>
  t instanceof Element &&
  t.matches('input,select,textarea') &&
  !/^(hidden|button|submit|reset|image|checkbox|radio|file|range|color|search)$/.test((t as Field).type)
    ? (t as Field)
    : null;

const FORM = 'form,[role=form]';
const formOf = (f: Field): Element | null => (f.closest('[role=search]') ? null : f.form || f.closest(FORM));
/** Only emptiness is read; a value never leaves the page. */
const isEmpty = (f: Field): boolean => !f.isConnected || f.value === '';
const stateOf = (t: EventTarget | null): FormState | undefined => forms.get(t as Element);

/** Sent, and no error shown or thrown since: the app empties such a form for the next entry ("add another"). */
const sentOk = (st: FormState): boolean => actions.errorAt < st.sentAt;

const sent = (st: FormState | undefined | false | null): void => {
  if (st) {
    st.sentAt = now();
  }
};

/**
 * Filled fields found empty again (by the user, a script or a re-render): enough of them arm a
 * restart, unless the form was sent successfully since (then it is simply ready for the next entry).
 */
const checkRestart = (st: FormState): void => {
  const cleared = [...st.filled].filter(isEmpty);
  if (cleared.length < FORM_RESTART_MIN_CLEARED) return;
  if (!sentOk(st)) st.restart = { how: 'cleared', cleared: cleared.length };
  for (const f of cleared) st.filled.delete(f);
};

const onInput = (e: Event): void => {
  const f = fieldOf(targetOf(e));
  const form = f && formOf(f);
  if (!e.isTrusted || !form) return;
  let st = forms.get(form);
  if (!st) {
    if (isEmpty(f)) return;
    forms.set(
      form,
      (st = {
        filled: new Set(),
        lastField: '',
        sentAt: 0,
        restart: null,
        done: false,
        known: describe(form),
        page: state.page,
      }),
    );
  }
  checkRestart(st);
  if (isEmpty(f)) return;
  st.filled.add(f);
  st.lastField = (f.name || f.id || f.type).slice(0, 64);
  if (st.restart) {
    // Filled again after being cleared or reset: the user is starting over.
    signal('form_restart', { el: form, known: st.known, meta: st.restart });
    st.restart = null;
    st.sentAt = 0;
  }
};

/**
 * form_abandon: a started form (a field filled by the user) that was not submitted when the page
 * is left, or, on an SPA route change, when the form is gone from the page.
 */
export const formsLeave = (onlyRemoved: boolean): void => {
  forms.forEach((st, form) => {
    if (st.sentAt || st.done || !st.filled.size || (onlyRemoved && form.isConnected)) return;
    st.done = true;
    signal('form_abandon', {
      el: form,
      known: st.known,
      page: st.page,
      meta: { fields: st.filled.size, last_field: st.lastField },
    });
  });
};

/** A click inside a started form, remembered so a request right after it counts as the form being sent. */
export const formsClick = (target: Element): void => {
  const form = target.closest(FORM);
  if (form && forms.has(form)) lastFormClick = { form, t: now() };
  if (target.closest('[type=submit],form button:not([type])')) actions.submitAt = now();
};

/** Ctrl/Cmd+Enter in a form's field: how chat and comment boxes send. */
export const formsShortcut = (f: Field): void => sent(stateOf(formOf(f)));

/** SPA forms often send with fetch from a plain button; a request right after a click in the form is a submit. */
export const formsNetwork = (): void => {
  sent(lastFormClick && now() - lastFormClick.t <= ERROR_CLICK_ATTRIBUTION_MS && forms.get(lastFormClick.form));
};

export const watchForms = (): void => {
  on('input', onInput);
  on('change', onInput);
  on('focusin', (e) => {
    const f = fieldOf(targetOf(e));
    const st = f && stateOf(formOf(f));
    if (st) checkRestart(st);
  });
  on('submit', (e) => sent(stateOf(targetOf(e))));
  // Sent without a submit event: by script (form.submit()), or by the Ctrl/Cmd+Enter of chat and comment boxes.
  // (formsShortcut).
  wrap(HTMLFormElement.prototype, 'submit', (form: HTMLFormElement) => sent(stateOf(form)));
  // `reset` fires before the fields are reset, so every filled field counts as cleared. After a
  // successful send it is the app making room for the next entry, not the user starting over.
  on('reset', (e) => {
    const st = stateOf(targetOf(e));
    if (!st || !st.filled.size) return;
    if (!sentOk(st)) st.restart = { how: 'reset', cleared: st.filled.size };
    st.filled.clear();
  });
};
