import type Koa from 'koa';
import type { LimitDecision } from '../limiter/limiter.ts';

/** IETF RateLimit header fields (draft) for a limiter decision, on every limited route; the policy names the window. */
export function setRateLimitHeaders(ctx: Koa.Context, d: LimitDecision, windowMs: number): void {
  ctx.set('RateLimit-Limit', String(d.limit));
  ctx.set('RateLimit-Remaining', String(d.remaining));
  ctx.set('RateLimit-Reset', String(d.resetSec));
  ctx.set('RateLimit-Policy', `${d.limit};w=${Math.round(windowMs / 1000)}`);
}
