import { NAV_HISTORY_MAX, SESSION_IDLE_MS } from './constants.ts';
import { uuid } from './ids.ts';

/** What the SDK keeps per tab (sessionStorage), with short keys because it is rewritten on every event. */
export interface SessionState {
  /** session id */
  i: string;
  /** last activity, epoch ms */
  l: number;
  /** recent page views [path, epoch ms], for navigation_loop across full page loads */
  h: [string, number][];
  /** anonymous id from identify() */
  a?: string;
  /** set by optOut(): nothing is recorded in this tab until optIn() */
  o?: 1;
}

const KEY = 'friction.session';
let mem: SessionState | null = null;

const load = (): SessionState | null => {
  try {
    // getItem gives null for a missing key, which JSON.parse reads as null.
    const s = JSON.parse(sessionStorage.getItem(KEY)!) as SessionState | null;
    return s?.i && s.h ? s : null;
  } catch {
    // Storage disabled (privacy mode, sandboxed iframe) or tampered with: keep the session in memory.
    return null;
  }
};

const save = (s: SessionState): void => {
  mem = s;
  try {
    sessionStorage.setItem(KEY, JSON.stringify(s));
  } catch {
    // Quota or storage disabled: the in-memory copy still serves this page.
  }
};

/**
 * The current session, renewed after 30 minutes without events; every call counts as activity.
 * The anonymous id and an opt-out outlive a session renewal: they belong to the visitor, not the visit.
 */
export const touch = (t = Date.now()): SessionState => {
  let s = mem || load();
  // A new session keeps the visitor's fields (anonymous id, opt-out) and nothing of the visit (l is set below).
  if (!s || t - s.l > SESSION_IDLE_MS) s = { ...s, i: uuid(), h: [] } as SessionState;
  s.l = t;
  save(s);
  return s;
};

/** Records a page view for loop detection. A reload (same path again) is not a new step. */
export const pushPage = (path: string, t = Date.now()): SessionState => {
  const s = touch(t);
  const last = s.h[s.h.length - 1];
  if (!last || last[0] !== path) s.h.push([path, t]);
  s.h = s.h.slice(-NAV_HISTORY_MAX);
  save(s);
  return s;
};

export const update = (fn: (s: SessionState) => void): void => {
  const s = touch();
  fn(s);
  save(s);
};
