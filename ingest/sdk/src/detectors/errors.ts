import { actions } from '../actions.ts';
import { now } from '../clock.ts';
import {
  ERROR_ACTION_WINDOW_MS,
  ERROR_CLICK_ATTRIBUTION_MS,
  MAX_ERROR_STATES_PER_ACTION,
  MAX_ERRORS_PER_PAGE,
  MAX_MESSAGE_CHARS,
} from '../constants.ts';
import { ignored, signal } from '../core.ts';
import { elementOf, on, targetOf } from '../dom-events.ts';
import { textOf } from '../label.ts';
import type { Meta } from '../types.ts';

let perPage = 0;
const messages = new Set<string>();
let action = -1;
let shown = new Set<Element>();
/** The action whose validation bubble was already counted. */
let validated = -1;

/**
 * Error messages: role=alert, and a role=status whose class says error (`toast--error`, `Toastify__toast--error`):
 * several toast libraries give every toast role=status, and most of those are news ("Saved"), not errors.
 */
const ALERT = '[role=alert],[role=status][class*=error i]';
/** Alerts that announce success or information are not errors, even though they use role=alert. */
const NOT_ERROR = /success|info|notice|saved|confirm/i;

export const errorsWatching = (): boolean => now() - actions.at <= ERROR_ACTION_WINDOW_MS;

/** Uncaught exceptions and rejections: once per distinct message per page, tied to a click just before. */
const uncaught = (kind: string, message: string): void => {
  const key = kind + message;
  if (perPage >= MAX_ERRORS_PER_PAGE || messages.has(key)) return;
  messages.add(key);
  const c = actions.click;
  report(c && now() - c.t <= ERROR_CLICK_ATTRIBUTION_MS && c.el.isConnected ? c.el : null, {
    kind,
    message: message.slice(0, MAX_MESSAGE_CHARS),
  });
};

/** Counts an error toward the page's limit, for the forms rule too (errorAt), and sends it. */
const report = (el: Element | null, meta: Meta): void => {
  perPage++;
  actions.errorAt = now();
  signal('error_encounter', { el, meta });
};

/** An error state shown in answer to the current user action, once per element per action. */
const shownState = (el: Element, kind: string): void => {
  if (action !== actions.seq) {
    action = actions.seq;
    shown = new Set();
  }
  if (shown.has(el) || shown.size >= MAX_ERROR_STATES_PER_ACTION || perPage >= MAX_ERRORS_PER_PAGE || ignored(el))
    return;
  shown.add(el);
  report(el, { kind });
};

const alertShown = (el: Element): void => {
  if (NOT_ERROR.test(el.className)) return;
  // Rendered (not display:none) and saying something: an empty live region waiting for text is not an error yet.
  if (el.getClientRects().length && textOf(el)) shownState(el, 'alert');
};

/**
 * Error states appearing within ERROR_ACTION_WINDOW_MS of a user action: an element with
 * role=alert added, revealed or given text, and a field getting aria-invalid="true".
 */
export const errorMutations = (records: MutationRecord[]): void => {
  if (!errorsWatching()) return;
  for (const r of records) {
    const t = elementOf(r.target);
    if (!t) continue;
    if (r.type === 'attributes') {
      if (r.attributeName === 'aria-invalid') {
        if (t.getAttribute('aria-invalid') === 'true') shownState(t, 'invalid');
      } else if (t.matches(ALERT)) alertShown(t);
      else if (/^(class|style|hidden)$/.test(r.attributeName || '')) t.querySelectorAll(ALERT).forEach(alertShown);
      continue;
    }
    const inAlert = t.closest(ALERT);
    if (inAlert) alertShown(inAlert);
    for (const n of r.addedNodes) {
      if (!(n instanceof Element)) continue;
      if (n.matches(ALERT)) alertShown(n);
      else n.querySelectorAll(ALERT).forEach(alertShown);
      n.querySelectorAll('[aria-invalid=true]').forEach((f) => shownState(f, 'invalid'));
    }
  }
};

export const watchErrors = (): void => {
  on<ErrorEvent>(
    'error',
    (e) => {
      // Resource load failures do not bubble to window; what arrives here is a script error.
      uncaught('exception', String(e.message || 'error'));
    },
    window,
  );
  on<PromiseRejectionEvent>(
    'unhandledrejection',
    (e) => {
      const r: unknown = e.reason;
      // An Error's message, or the reason as text (a string as it is; an object as [object Object]).
      uncaught('rejection', r instanceof Error ? r.message : String(r));
    },
    window,
  );
  // The browser's validation bubble, shown for the first invalid field of a submit attempt. `invalid`
  // also fires for scripted checkValidity() calls, which show nothing, hence the submit-attempt test.
  on('invalid', (e) => {
    const el = targetOf(e);
    if (!el || now() - actions.submitAt > ERROR_CLICK_ATTRIBUTION_MS || validated === actions.seq) return;
    validated = actions.seq;
    shownState(el, 'validation');
  });
};
