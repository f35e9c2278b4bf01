import { actions } from './actions.ts';
import { watchActivity } from './activity.ts';
import { now } from './clock.ts';
import { batchContext, landing } from './context.ts';
import { ignored, state } from './core.ts';
import { deadActivity, deadClick, deadPending, deadReset } from './detectors/dead.ts';
import { disabledPress } from './detectors/disabled.ts';
import { errorMutations, errorsWatching, watchErrors } from './detectors/errors.ts';
import { formsClick, formsLeave, formsNetwork, watchForms } from './detectors/forms.ts';
import { conversionTarget, pageRestored, routeChanged, startNavigation } from './detectors/navigation.ts';
import { rageActive, rageClick, rageEnd, rageMutations } from './detectors/rage.ts';
import { elementOf, on } from './dom-events.ts';
import { uuid } from './ids.ts';
import { interactiveFor } from './interactive.ts';
import { createTransport } from './transport.ts';
import type { ConversionRule, WireContext } from './types.ts';

export interface Settings {
  url: string;
  key: string;
  interval: number;
  ignore: string[];
  conversions: ConversionRule[];
  context: Pick<WireContext, 'environment' | 'app_version'>;
}

/** Routes every trusted press and click to the detectors that need it, resolving the click target once. */
function watchPointer(): void {
  on<PointerEvent>(document, 'pointerdown', (e) => {
    if (!e.isTrusted) return;
    actions.seq++;
    actions.at = now();
    if (e.target instanceof Element) disabledPress(e, e.target);
  });
  on<MouseEvent>(document, 'mousedown', (e) => {
    if (e.detail > 1) actions.multiAt = now();
  });
  on<KeyboardEvent>(document, 'keydown', (e) => {
    if (e.isTrusted && (e.key === 'Enter' || e.key === ' ')) {
      actions.seq++;
      actions.at = now();
    }
  });
  on<MouseEvent>(document, 'click', (e) => {
    const target = e.target;
    // Scripted clicks (element.click(), dispatchEvent) are the page talking to itself, not a user.
    if (!e.isTrusted || e.button !== 0 || !(target instanceof Element)) return;
    const el = interactiveFor(target);
    actions.click = { el: el || target, t: now() };
    formsClick(target);
    conversionTarget(target);
    if (ignored(target)) return;
    rageClick(e, target, el);
    deadClick(e, target, el);
  });
}

/** Wires the detectors and the transport. Called once, for a sampled-in session. */
export function start(o: Settings): void {
  const base = { ...landing(), ...o.context };
  state.ignore = o.ignore;
  state.transport = createTransport({
    url: o.url,
    key: o.key,
    interval: o.interval,
    // Bound now, before the activity watcher wraps window.fetch: our own sends are not page activity.
    fetch: window.fetch.bind(window),
    context: () => {
      const c = batchContext(base);
      if (state.anon) c.anonymous_id = state.anon;
      return c;
    },
    dropEvent: (count) => ({ id: uuid(), ts: Date.now(), page: state.page, type: 'custom', name: 'sdk_queue_dropped', value: count }),
  });
  watchActivity({
    activity: (kind, target) => {
      if (kind === 'net') formsNetwork();
      deadActivity(kind, target);
    },
    wanted: () => deadPending() > 0 || rageActive() || errorsWatching(),
    mutations: (records) => {
      if (deadPending() && records.some((r) => !ignored(elementOf(r.target) || document.documentElement))) deadActivity('dom', null);
      rageMutations(records);
      errorMutations(records);
    },
    route: routeChanged,
    multiClickAt: () => actions.multiAt,
  });
  watchPointer();
  watchErrors();
  watchForms();
  on<PageTransitionEvent>(window, 'pagehide', () => {
    rageEnd();
    deadReset();
    formsLeave(false);
    state.transport!.beacon();
  }, false);
  on<PageTransitionEvent>(window, 'pageshow', (e) => e.persisted && pageRestored(), false);
  on(document, 'visibilitychange', () => document.visibilityState === 'hidden' && state.transport!.beacon());
  startNavigation(o.conversions);
}
