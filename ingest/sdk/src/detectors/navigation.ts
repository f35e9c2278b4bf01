import { FORM_ROUTE_SETTLE_MS } from '../constants.ts';
import { pagePath } from '../context.ts';
import { amount, emit, signal, state } from '../core.ts';
import { guard } from '../guard.ts';
import { findLoop } from '../loop.ts';
import { pushPage, update } from '../session.ts';
import type { ConversionRule } from '../types.ts';
import { formsLeave } from './forms.ts';
import { rageNavigated } from './rage.ts';

let rules: ConversionRule[] = [];
let settling = 0;

/** Route changes whose old forms are still to be judged (see routeChanged). */
export const routesPending = (): number => settling;

const pageMatches = (pattern: string, path: string): boolean =>
  pattern.endsWith('*') ? path.startsWith(pattern.slice(0, -1)) : path === pattern;

const conversion = (rule: ConversionRule, selector?: string): void => {
  emit({
    type: 'conversion',
    name: String(rule.name || 'conversion').slice(0, 128),
    selector,
    value: amount(rule.value),
  });
};

const pageView = (spa: boolean, reload: boolean): void => {
  emit({ type: 'page_view', meta: spa ? { spa } : undefined });
  const t = Date.now();
  const loop = findLoop(pushPage(state.page, t).h, t);
  if (loop) {
    signal('navigation_loop', { meta: { cycle: loop.cycle.join(' > '), ms: loop.ms } });
    // Start over, so the next view does not report the same loop again.
    update((s) => {
      s.h = s.h.slice(-1);
    });
  }
  // A reload of a thank-you page is not a second purchase.
  if (!reload) {
    for (const r of rules) {
      try {
        if (pageMatches(r.page!, state.page)) conversion(r);
      } catch {
        // A rule without a page (a selector rule), or not an object at all, must not stop the other rules.
      }
    }
  }
};

/**
 * A page view for a document load (`conversions` given, at init) or a back/forward-cache restore
 * (a page view without a new load).
 */
export const pageLoaded = (conversions?: ConversionRule[]): void => {
  state.page = pagePath();
  let reload = false;
  if (conversions) {
    rules = conversions;
    const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
    reload = nav?.type === 'reload';
  }
  pageView(false, reload);
};

/** The URL changed inside the document; a new path (or hash route) is a page view. */
export const routeChanged = (): boolean => {
  const p = pagePath();
  if (p === state.page) return false;
  state.page = p;
  pageView(true, false);
  rageNavigated();
  // Routers render the new route after changing the URL; judge the old route's forms once it has.
  settling++;
  setTimeout(
    guard(() => {
      settling--;
      formsLeave(true);
    }),
    FORM_ROUTE_SETTLE_MS,
  );
  return true;
};

/** A click on (or inside) an element matching a conversion rule's selector. */
export const conversionTarget = (target: Element): void => {
  for (const r of rules) {
    try {
      if (target.closest(r.selector!)) conversion(r, r.selector!.slice(0, 512));
    } catch {
      // A rule without a selector, or with one that does not parse, must not stop the other rules.
    }
  }
};
