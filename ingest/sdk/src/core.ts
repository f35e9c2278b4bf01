import { coordsFor, type Point } from './coords.ts';
import { hostOf } from './dom-events.ts';
import { guard } from './guard.ts';
import { uuid } from './ids.ts';
import { labelFor } from './label.ts';
import { cleanMeta } from './meta.ts';
import { scrub } from './scrub.ts';
import { selectorFor } from './selector.ts';
import { touch } from './session.ts';
import type { Transport } from './transport.ts';
import type { Meta, WireEvent } from './types.ts';

/** Process-wide SDK state: set once by init(), read by every detector. */
export const state = {
  transport: null as Transport | null,
  /** The current page (see pagePath); events carry the page they happened on. */
  page: '',
  /** Selectors of opted-out regions: the attribute, then init's `ignore`, then the remote config's. */
  ignore: ['[data-friction-ignore]'],
  /** From identify(): goes into every batch's context.anonymous_id. */
  anon: undefined as string | undefined,
};

export type Draft = Omit<WireEvent, 'id' | 'ts' | 'page'>;

/**
 * Elements the site opted out: `data-friction-ignore` on it or an ancestor, or an `ignore` selector; an element
 * inside a shadow root is also ignored when its host is.
 */
export const ignored = (el: Element | null | undefined): boolean =>
  !!el &&
  (state.ignore.some((s) => {
    try {
      return !!el.closest(s);
    } catch {
      // A selector that does not parse matches nothing; it must not cost the other rules.
      return false;
    }
  }) ||
    ignored(hostOf(el)));

/** A conversion's value when the contract takes it (a number, 0..1e12); undefined is left out of the JSON. */
export const amount = (v: unknown): number | undefined => (typeof v == 'number' && v >= 0 && v <= 1e12 ? v : undefined);

/** An event stamped for the wire: uuid for dedup, time, page. */
export const stamp = (d: Draft, page = state.page): WireEvent => ({ id: uuid(), ts: Date.now(), page, ...d });

/** Stamps an event and queues it under the current session. */
export const emit = (d: Draft, page?: string): void => {
  state.transport?.push(touch().i, stamp(d, page));
};

/** An element's identity in a signal: selector, label and, given a pointer position, coordinates. */
export type Identity = Pick<WireEvent, 'selector' | 'label' | 'x' | 'y' | 'vx' | 'vy' | 'px' | 'py'>;

export const describe = (el: Element, point?: Point): Identity => {
  // Each part guarded on its own: a signal without coordinates or a label still tells the story.
  const d: Identity = (point && guard(coordsFor)(el, point)) || {};
  const sel = guard(selectorFor)(el);
  const label = guard(labelFor)(el);
  if (sel) d.selector = sel;
  if (label) d.label = scrub(label);
  return d;
};

/** What a detector knows about a signal; the element's identity is derived here unless given. */
export interface SignalInit {
  el?: Element | null;
  /** Where the pointer was, for heatmap coordinates relative to `el`. */
  point?: Point;
  meta?: Meta;
  /** Precomputed identity, when the element may have changed or gone by the time the signal is emitted. */
  known?: Identity;
  /** The page it happened on, when that is no longer the current one. */
  page?: string;
}

export const signal = (name: string, init: SignalInit = {}): void => {
  const { el } = init;
  if (ignored(el)) return;
  const d: Draft = { type: 'signal', signal: name, ...(init.known || (el ? describe(el, init.point) : {})) };
  const meta = cleanMeta(init.meta);
  if (meta) {
    // Free text (an error's message, a field's name) may carry what the visitor typed.
    for (const k in meta) if (typeof meta[k] == 'string') meta[k] = scrub(meta[k] as string);
    d.meta = meta;
  }
  emit(d, init.page);
};
