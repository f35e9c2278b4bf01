import type { LimitDecision } from '../limiter/limiter.ts';

/** IETF RateLimit header fields (draft) for a limiter decision, on every limited route; the policy names the window. */
export function setRateLimitHeaders(
  set: (name: string, value: string) => void,
  d: LimitDecision,
  windowMs: number,
): void {
  set('RateLimit-Limit', String(d.limit));
  set('RateLimit-Remaining', String(d.remaining));
  set('RateLimit-Reset', String(d.resetSec));
  set('RateLimit-Policy', `${d.limit};w=${Math.round(windowMs / 1000)}`);
}
