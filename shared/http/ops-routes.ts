import type Koa from 'koa';
import Router from '@koa/router';
import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError, ForbiddenError, UnauthorizedError } from '../errors.ts';
import { plainAddress } from './client-address.ts';
import { ok } from './envelope.ts';
import { packageVersion, registry } from './metrics.ts';

/**
 * A named readiness check: resolves true when the dependency answers. A `soft` one is reported (`degraded`) but does
 * not make the process unready: the process still serves without it (Redis: limits then hold per replica), and
 * taking every replica out of a load balancer for it would turn a degradation into an outage.
 */
export type ReadinessCheck = [name: string, check: () => Promise<boolean>, opts?: { soft?: boolean }];

/** `/healthz` (process alive), `/readyz` (dependencies answer; 503 otherwise), `/metrics` (Prometheus). */
export function opsRouter(role: string, checks: ReadinessCheck[], opts: { metricsToken?: string } = {}): Router {
  const router = new Router();
  const version = packageVersion();
  router.get('/healthz', (ctx) => {
    ctx.body = ok({ status: 'ok', role, version });
  });
  router.get('/readyz', async (ctx) => {
    const results = await Promise.all(
      checks.map(
        async ([name, check, opts]) =>
          [name, await Promise.race([check().catch(() => false), timeout(2000)]), opts?.soft === true] as const,
      ),
    );
    const status = Object.fromEntries(results.map(([n, r, soft]) => [n, r ? 'ok' : soft ? 'degraded' : 'down']));
    const ready = results.every(([, r, soft]) => r || soft);
    // Not ready leaves through the one error path: 503 `unavailable`, Retry-After, the checks as details.
    if (!ready)
      throw new AppError('unavailable', 503, 'a dependency is not ready', {
        details: status,
        retryAfterSec: 5,
        retriable: true,
      });
    ctx.body = ok({ status: 'ready', role, checks: status });
  });
  router.get('/metrics', metricsAccess(opts.metricsToken), async (ctx) => {
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  });
  return router;
}

/**
 * Who may scrape /metrics. With METRICS_TOKEN: whoever sends it as a Bearer token (compared in constant time).
 * Without: direct loopback requests only (a loopback TCP peer, and no forwarding header: a reverse proxy on the same
 * host also connects from loopback), so a default install does not publish its internals while a local Prometheus
 * or `curl localhost` still works.
 */
function metricsAccess(token: string | undefined): Koa.Middleware {
  const expected = token ? createHash('sha256').update(token).digest() : null;
  return async (ctx, next) => {
    if (expected) {
      const m = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'));
      const given = createHash('sha256')
        .update(m?.[1] ?? '')
        .digest();
      if (!m || !timingSafeEqual(given, expected))
        throw new UnauthorizedError('/metrics needs Authorization: Bearer <METRICS_TOKEN>');
    } else if (
      !isLoopback(ctx.req.socket.remoteAddress ?? '') ||
      !isLoopback(ctx.ip) ||
      ctx.get('x-forwarded-for') ||
      ctx.get('forwarded')
    ) {
      // NOTE: a reverse proxy on the same host connects from loopback too: a forwarded request is not a local one.
      throw new ForbiddenError('/metrics answers loopback only; set METRICS_TOKEN to scrape it from elsewhere');
    }
    await next();
  };
}

function isLoopback(addr: string): boolean {
  const a = plainAddress(addr);
  return a === '::1' || /^127\./.test(a);
}

const timeout = (ms: number) => new Promise<false>((r) => setTimeout(() => r(false), ms).unref());
