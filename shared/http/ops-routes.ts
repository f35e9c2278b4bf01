import Router from '@koa/router';
import { AppError } from '../errors.ts';
import { ok } from './envelope.ts';
import { registry } from './metrics.ts';

/** A named readiness check: resolves true when the dependency answers. */
export type ReadinessCheck = [name: string, check: () => Promise<boolean>];

/** `/healthz` (process alive), `/readyz` (dependencies answer; 503 otherwise), `/metrics` (Prometheus). */
export function opsRouter(role: string, checks: ReadinessCheck[]): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = ok({ status: 'ok', role });
  });
  router.get('/readyz', async (ctx) => {
    const results = await Promise.all(
      checks.map(async ([name, check]) => [name, await Promise.race([check().catch(() => false), timeout(2000)])] as const),
    );
    const status = Object.fromEntries(results.map(([n, r]) => [n, r ? 'ok' : 'down']));
    const ready = results.every(([, r]) => r);
    // Not ready leaves through the one error path: 503 `unavailable`, Retry-After, the checks as details.
    if (!ready) throw new AppError('unavailable', 503, 'a dependency is not ready', { details: status, retryAfterSec: 5, retriable: true });
    ctx.body = ok({ status: 'ready', role, checks: status });
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  });
  return router;
}

const timeout = (ms: number) => new Promise<false>((r) => setTimeout(() => r(false), ms).unref());
