import Koa from 'koa';
import Router from '@koa/router';
import type { Logger } from '../logger.ts';
import { errorEnvelope } from './envelope.ts';
import { httpDuration, httpRequests } from './metrics.ts';

export interface HttpAppOptions {
  role: string;
  log: Logger;
  routers: Router[];
  /** Level of the per-request log line. Ingest uses debug: at fleet rates an info line per batch costs more than the batch. */
  requestLogLevel?: 'info' | 'debug';
  /** Middleware that runs before routing (CORS). */
  before?: Koa.Middleware[];
}

/**
 * The Koa app every role serves: the error envelope outermost, one log line and metric per request,
 * then one root router, so unmatched paths (404) and methods (405) end in the envelope too.
 */
export function createHttpApp(opts: HttpAppOptions): Koa {
  const { role, log } = opts;
  const level = opts.requestLogLevel ?? 'info';
  const app = new Koa();
  app.proxy = true;
  app.silent = true;
  app.use(async (ctx, next) => {
    const start = performance.now();
    try {
      await next();
    } finally {
      const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      const ms = performance.now() - start;
      httpRequests.inc({ role, route, status: ctx.status });
      httpDuration.observe({ role, route }, ms / 1000);
      const lineLevel = ctx.status >= 500 ? 'error' : level;
      if (log.isLevelEnabled(lineLevel)) log[lineLevel]({ method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10 }, 'request');
    }
  });
  app.use(errorEnvelope(log));
  for (const mw of opts.before ?? []) app.use(mw);
  const root = new Router();
  for (const r of opts.routers) root.use(r.routes());
  app.use(root.routes());
  app.use(root.allowedMethods({ throw: true }));
  return app;
}
