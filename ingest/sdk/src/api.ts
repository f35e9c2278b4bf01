import { FLUSH_INTERVAL_MS, MIN_FLUSH_INTERVAL_MS } from './constants.ts';
import { amount, emit, state } from './core.ts';
import { deadPending } from './detectors/dead.ts';
import { routesPending } from './detectors/navigation.ts';
import { rageActive } from './detectors/rage.ts';
import { guard, health } from './guard.ts';
import { inSample } from './ids.ts';
import { cleanMeta } from './meta.ts';
import { touch, update } from './session.ts';
import { start } from './start.ts';
import type { FrictionOptions, Meta } from './types.ts';

declare const __FRICTION_VERSION__: string;

/** The SDK version, stamped by the build. */
export const version: string = typeof __FRICTION_VERSION__ === 'string' ? __FRICTION_VERSION__ : 'dev';

let initialized = false;
let sampled = false;

const warn = (msg: string): void => console.warn(`[friction] ${msg}`);
const text = (v: unknown, max: number): string | undefined =>
  typeof v === 'string' && v ? v.slice(0, max) : undefined;

/**
 * Starts the SDK. Returns whether it is running (false: bad options, not a browser, already started).
 * A session outside `sampleRate` initializes nothing but returns true.
 */
export const init = guard((o: FrictionOptions): boolean => {
  if (initialized || typeof document === 'undefined') return false;
  // test() reads a missing or non-string value as text ("undefined"), which fails both patterns.
  if (!/^svc_pub_/.test(o?.key) || !/^https?:\/\//.test(o.endpoint)) {
    warn('bad key or endpoint');
    return false;
  }
  initialized = true;
  const s = touch();
  state.anon = s.a;
  const rate = typeof o.sampleRate === 'number' ? o.sampleRate : 1;
  // A visitor who opted out (optOut(), on this or an earlier page of the tab) is recorded as if sampled out.
  sampled = inSample(s.i, rate) && !s.o;
  if (sampled) {
    start({
      url: o.endpoint.replace(/\/+$/, ''),
      key: o.key,
      interval: o.flushInterval! > 0 ? Math.max(MIN_FLUSH_INTERVAL_MS, o.flushInterval!) : FLUSH_INTERVAL_MS,
      // A non-string entry is harmless: ignored() treats a selector that does not parse as matching nothing.
      ignore: Array.isArray(o.ignore) ? o.ignore : [],
      conversions: Array.isArray(o.conversions) ? o.conversions : [],
      context: { environment: text(o.environment, 32), app_version: text(o.appVersion, 64) },
      // The two rates multiply: the page and the site's config can each only narrow the sample.
      sample: (r) => (sampled = inSample(s.i, rate * r)),
    });
  }
  return true;
});

/** A custom event: `name` (1..128 chars) and primitive props. */
export const track = guard((name: string, props?: Meta): void => {
  const n = text(name, 128);
  if (n) emit({ type: 'custom', name: n, meta: cleanMeta(props) });
});

/** A conversion, with its value (0..1e12) when it has one; `props.name` names it. */
export const conversion = guard((value?: number, props?: Meta): void => {
  emit({ type: 'conversion', name: text(props?.name, 128), meta: cleanMeta(props), value: amount(value) });
});

/**
 * Sets the visitor's anonymous id (context.anonymous_id), kept for the tab's session. Anonymous
 * only: anything that looks like an email address is refused, since it would be personal data.
 */
export const identify = guard((a: string): void => {
  // 1..128 characters, none of them `@`; test() reads a non-string as text, which is then stored as given: hence
  // the type check.
  if (typeof a != 'string' || !/^[^@]{1,128}$/.test(a)) return warn('identify: anonymous only');
  state.anon = a;
  update((s) => {
    s.a = a;
  });
});

/** Sends everything queued now, instead of at the next interval. */
export const flush = guard((): void => {
  state.transport?.flush(true);
});

/** Counters for debugging and tests. `pending` counts detections still inside their time window. */
export const stats = guard(() => ({
  version,
  sampled,
  queued: 0,
  inflight: false,
  pending: deadPending() + +rageActive() + routesPending(),
  ...state.transport?.info(),
  ...health,
}));

/**
 * The visitor declines: recording stops at once (what is queued is dropped, nothing more is sent) and stays off
 * on every later page of the tab (kept with the session in sessionStorage) until optIn().
 */
export const optOut = guard((): void => {
  state.transport = null;
  update((s) => {
    s.o = 1;
  });
});

/** The visitor consents again: recording starts with the next page load. */
export const optIn = guard((): void =>
  update((s) => {
    delete s.o;
  }),
);
