import { actions } from './actions.ts';
import { adopt, watchActivity } from './activity.ts';
import { now } from './clock.ts';
import { distance } from './coords.ts';
import { DRAG_MIN_PX } from './constants.ts';
import { batchContext, landing } from './context.ts';
import { ignored, state } from './core.ts';
import { deadActivity, deadClick, deadMutations, deadPending, deadReset } from './detectors/dead.ts';
import { disabledPress } from './detectors/disabled.ts';
import { errorMutations, errorsWatching, watchErrors } from './detectors/errors.ts';
import { fieldOf, formsClick, formsShortcut, formsLeave, formsNetwork, watchForms } from './detectors/forms.ts';
import { conversionTarget, pageLoaded, routeChanged } from './detectors/navigation.ts';
import { rageActive, rageClick, rageEnd, rageMutations } from './detectors/rage.ts';
import { on, targetOf } from './dom-events.ts';
import { guard } from './guard.ts';
import { interactiveFor } from './interactive.ts';
import { watchTyping } from './scrub.ts';
import { createTransport } from './transport.ts';
import type { ConversionRule, RemoteConfig, WireContext } from './types.ts';

export interface Settings {
  /** Ingest base URL, no trailing slash. */
  url: string;
  key: string;
  interval: number;
  ignore: string[];
  conversions: ConversionRule[];
  context: Pick<WireContext, 'environment' | 'app_version'>;
  /** Whether the session stays in the sample at the remote config's rate (the page's own rate applied too). */
  sample: (remoteRate: number) => boolean;
}

/** Routes every trusted press and click to the detectors that need it, resolving the click target once. */
const watchPointer = (): void => {
  on<PointerEvent>('pointerdown', (e) => {
    const target = targetOf(e);
    adopt(e);
    if (!e.isTrusted || !target) return;
    actions.seq++;
    actions.at = now();
    actions.down = e;
    // Provisional: an error thrown by the page while it handles this press belongs to this element.
    actions.click = { el: target, t: actions.at };
    disabledPress(e, target);
  });
  on('focusin', adopt);
  on<KeyboardEvent>('keydown', (e) => {
    if (!e.isTrusted || (e.key !== 'Enter' && e.key !== ' ')) return;
    actions.seq++;
    actions.at = now();
    const f = e.key === 'Enter' && fieldOf(targetOf(e));
    if (!f) return;
    // Enter in a form field submits it: native validation may answer with a bubble.
    actions.submitAt = now();
    if (e.ctrlKey || e.metaKey) formsShortcut(f);
  });
  on<MouseEvent>('click', (e) => {
    const target = targetOf(e);
    const d = actions.down;
    // Scripted clicks (element.click(), dispatchEvent) are the page talking to itself, not a user.
    if (!e.isTrusted || e.button !== 0 || !target) return;
    const el = interactiveFor(target);
    actions.click = { el: el || target, t: now() };
    formsClick(target);
    conversionTarget(target);
    // The click that ends a drag (the pointer moved from where it was pressed) is not a click on anything;
    // keyboard activations (detail 0) had no press.
    if (ignored(target) || (e.detail && d && distance(e, d) > DRAG_MIN_PX)) return;
    rageClick(e, target, el);
    deadClick(e, target, el);
  });
};

/** Wires the detectors and the transport. Called once, for a sampled-in session. */
export const start = (o: Settings): void => {
  const base = { ...landing(), ...o.context };
  state.ignore = state.ignore.concat(o.ignore);
  // Bound now, before the activity watcher wraps window.fetch: our own requests are not page activity.
  const f = window.fetch.bind(window);
  const t = (state.transport = createTransport({
    url: `${o.url}/v1/ingest`,
    key: o.key,
    interval: o.interval,
    fetch: f,
    context: () => {
      const c = batchContext(base);
      if (state.anon) c.anonymous_id = state.anon;
      return c;
    },
  }));
  // The site's remote config (sample rate, ignore selectors), applied once: then() and its rejection
  // handler are exclusive, so exactly one of them runs. Detection runs meanwhile and the transport holds what it
  // queues, so a session the config samples out sends nothing. Should the answer never come, the pagehide beacon
  // still sends what was held.
  const apply = guard((c?: RemoteConfig): void => {
    if (c) {
      if (!o.sample(c.sample_rate)) return void (state.transport = null);
      // segment.app_version is applied by ingest, to every batch without an app_version of its own.
      state.ignore = state.ignore.concat(c.ignore_selectors);
    }
    t.release();
  });
  // The key is base62 after its prefix (init checked the prefix); an environment that is not a slug gets a 400,
  // and the page's own settings apply.
  f(`${o.url}/v1/sdk-config?key=${o.key}&environment=${o.context.environment || ''}`, { credentials: 'omit' })
    .then((r) => r.json())
    .then(
      (j: { data?: RemoteConfig }) => apply(j.data),
      () => apply(),
    );
  // Each watcher is guarded on its own: a browser API that is missing or broken disables one
  // detector, not the SDK.
  guard(watchActivity)({
    activity: (kind, target) => {
      if (kind === 'net') formsNetwork();
      deadActivity(kind, target);
    },
    wanted: () => deadPending() > 0 || rageActive() || errorsWatching(),
    mutations: (records) => {
      deadMutations(records);
      rageMutations(records);
      errorMutations(records);
    },
    route: routeChanged,
  });
  for (const w of [watchPointer, watchErrors, watchForms, watchTyping]) guard(w)();
  const beacon = (): void => {
    // A session the remote config sampled out has no transport left.
    state.transport?.beacon();
  };
  on<PageTransitionEvent>(
    'pagehide',
    () => {
      rageEnd();
      deadReset();
      formsLeave(false);
      beacon();
    },
    window,
  );
  on<PageTransitionEvent>('pageshow', (e) => e.persisted && pageLoaded(), window);
  on('visibilitychange', () => document.visibilityState === 'hidden' && beacon());
  guard(pageLoaded)(o.conversions);
};
