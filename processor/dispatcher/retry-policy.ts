/**
 * When to try a delivery again and when to give up on an endpoint. Pure functions; the dispatcher applies them.
 */

const S = 1000;
const M = 60 * S;
const H = 60 * M;

/**
 * Delay before attempt n+1 after attempt n failed (index n-1). Eight attempts over about 27.5 hours: the first
 * retries come fast (a receiver restarting), then spread out so a receiver that is down for a day still gets
 * everything when it returns (the schedule Svix publishes, which Standard Webhooks receivers are used to).
 */
export const RETRY_DELAYS_MS: readonly number[] = [5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 10 * H];
/** Attempts in all, the first included. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Each delay is scaled by a random factor in [1 - JITTER, 1 + JITTER], so a receiver that recovers is not hit by every retry at once. */
export const JITTER = 0.2;
/** A receiver's Retry-After is honoured up to this long (beyond it the schedule's next delay applies). */
export const MAX_RETRY_AFTER_MS = 10 * H;
/** How long a dispatcher owns a claimed delivery: longer than the 10 s request deadline plus the database writes. */
export const CLAIM_LEASE_MS = 60 * S;

/** An endpoint failing this many attempts in a row... */
export const DISABLE_AFTER_FAILURES = 20;
/** ...over at least this long is disabled (a short outage never disables; a long dead one does). */
export const DISABLE_AFTER_MS = 5 * 24 * H;

export type AttemptOutcome =
  | { ok: true; status: number; logged?: LoggedAs }
  | { ok: false; status: number | null; error: string; retryAfterMs?: number; logged?: LoggedAs };

/**
 * What the delivery log (read by tenant admins) stores instead of the real status and error: for targets on a
 * private network, only the status class and a fixed reason, so the log cannot probe internal services.
 */
export interface LoggedAs {
  status: number | null;
  error: string | null;
}

/** Any 2xx is success (redirects are not followed, so a 3xx fails). */
export const isSuccess = (status: number): boolean => status >= 200 && status < 300;

/** 410 Gone: the receiver says the endpoint no longer exists; it is disabled at once and never retried. */
export const isGone = (status: number | null): boolean => status === 410;

/**
 * The delay before the next attempt after failed attempt `attempt` (1-based), or null when that was the last.
 * `random` in [0, 1) gives the jitter; `retryAfterMs` (from the receiver) lengthens the delay, never shortens it.
 */
export function nextRetryDelayMs(attempt: number, random: number, retryAfterMs?: number): number | null {
  if (attempt >= MAX_ATTEMPTS) return null;
  const base = RETRY_DELAYS_MS[attempt - 1]!;
  const jittered = Math.round(base * (1 - JITTER + 2 * JITTER * random));
  const asked = retryAfterMs === undefined ? 0 : Math.min(MAX_RETRY_AFTER_MS, Math.max(0, retryAfterMs));
  return Math.max(jittered, asked);
}

/** Retry-After as seconds or an HTTP date, in ms from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export interface EndpointHealth {
  consecutiveFailures: number;
  failingSince: number | null;
}

/** The endpoint's streak after one more attempt, and whether it is to be disabled now (with the reason). */
export function afterAttempt(
  h: EndpointHealth,
  outcome: AttemptOutcome,
  now: number,
): EndpointHealth & { disable: string | null } {
  if (outcome.ok) return { consecutiveFailures: 0, failingSince: null, disable: null };
  const next = { consecutiveFailures: h.consecutiveFailures + 1, failingSince: h.failingSince ?? now };
  if (isGone(outcome.status)) return { ...next, disable: 'the endpoint answered 410 Gone' };
  if (next.consecutiveFailures >= DISABLE_AFTER_FAILURES && now - next.failingSince >= DISABLE_AFTER_MS) {
    return {
      ...next,
      disable: `${next.consecutiveFailures} failed attempts in a row since ${new Date(next.failingSince).toISOString()}`,
    };
  }
  return { ...next, disable: null };
}
