import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import Router from '@koa/router';
import type { Logger } from '../logger.ts';
import { clientAddressMiddleware, trustedProxyList } from './client-address.ts';
import { errorEnvelope, ok } from './envelope.ts';
import { ValidationError } from '../errors.ts';
import { hasUnstorableText } from '../text.ts';
import { httpDuration, httpRequests } from './metrics.ts';

export interface HttpAppOptions {
  role: string;
  log: Logger;
  routers: Router[];
  /** Level of the per-request log line. Ingest uses debug: at fleet rates an info line per batch costs more than the batch. */
  requestLogLevel?: 'info' | 'debug';
  /** Middleware that runs before routing (CORS). */
  before?: Koa.Middleware[];
  /** Proxies whose X-Forwarded-For is believed (TRUSTED_PROXIES); none by default. */
  trustedProxies?: string;
}

/**
 * The Koa app every role serves: the error envelope outermost, one log line and metric per request,
 * then one root router, so unmatched paths (404) and methods (405) end in the envelope too.
 */
export function createHttpApp(opts: HttpAppOptions): Koa {
  const { role, log } = opts;
  const level = opts.requestLogLevel ?? 'info';
  const app = new Koa();
  // NOTE: never `app.proxy = true`: Koa would then believe X-Forwarded-For from anyone, and a client could pick the
  // address every per-IP limit counts against. clientAddressMiddleware believes only the configured proxies.
  app.proxy = false;
  const trusted = trustedProxyList(opts.trustedProxies ?? '');
  app.silent = true;
  app.use(clientAddressMiddleware(trusted));
  app.use(async (ctx, next) => {
    const start = performance.now();
    // A request id in the log line and the X-Request-Id header of every answer (errors included), so a user's
    // report of an error finds its log line. A caller's (or proxy's) own id is kept when it looks like one. Not in
    // the body: a refused request for another tenant's object must stay byte for byte the answer to a random id.
    const given = ctx.get('X-Request-Id');
    const requestId = /^[\w.:-]{8,128}$/.test(given) ? given : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      const ms = performance.now() - start;
      httpRequests.inc({ role, route, status: ctx.status });
      httpDuration.observe({ role, route }, ms / 1000);
      const lineLevel = ctx.status >= 500 ? 'error' : level;
      if (log.isLevelEnabled(lineLevel)) log[lineLevel]({ request_id: requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10 }, 'request');
    }
  });
  app.use(errorEnvelope(log));
  app.use(refuseUnstorableUrl);
  app.use(unversionedAliases);
  for (const mw of opts.before ?? []) app.use(mw);
  app.use(optionsInEnvelope);
  const root = new Router();
  for (const r of opts.routers) root.use(r.routes());
  app.use(root.routes());
  // Not thrown: the router then sets `Allow` on 405 (and on 501 for methods it does not know), and the error
  // envelope turns both into 405 `method_not_allowed`, header kept.
  app.use(root.allowedMethods());
  return app;
}

/**
 * The spec's `{alt_base_url}` serves the same `/query` and `/manage` routes without the version prefix: they are
 * the `/v1` routes under another name (same auth, limits and answers).
 */
const unversionedAliases: Koa.Middleware = (ctx, next) => {
  if (ctx.path.startsWith('/query/') || ctx.path.startsWith('/manage/')) ctx.path = `/v1${ctx.path}`;
  return next();
};

/** `OPTIONS` on a route answers its methods in the envelope (the router alone would send an empty body). */
const optionsInEnvelope: Koa.Middleware = async (ctx, next) => {
  await next();
  if (ctx.method === 'OPTIONS' && ctx.status === 200 && ctx.body === '') {
    ctx.body = ok({ allow: (ctx.response.get('Allow') || '').split(', ').filter(Boolean) });
  }
};

/**
 * Query parameters and path segments are text that routes compare with or store in PostgreSQL, which refuses NUL
 * (and unpaired surrogates): checked once here, as a 400 naming the parameter, instead of a 500 in whichever
 * query first meets it.
 */
const refuseUnstorableUrl: Koa.Middleware = (ctx, next) => {
  if (ctx.querystring.includes('%')) {
    for (const [name, value] of Object.entries(ctx.query)) {
      for (const v of Array.isArray(value) ? value : [value ?? '']) {
        if (hasUnstorableText(v) || hasUnstorableText(name)) {
          throw new ValidationError(`invalid query: ${name}: contains a NUL character or an unpaired UTF-16 surrogate`, [{ path: name, message: 'contains a NUL character or an unpaired UTF-16 surrogate' }]);
        }
      }
    }
  }
  if (ctx.path.includes('%')) {
    let decoded: string | undefined;
    try {
      decoded = decodeURIComponent(ctx.path);
    } catch {
      throw new ValidationError('invalid path: malformed percent-encoding', [{ path: 'path', message: 'malformed percent-encoding' }]);
    }
    if (hasUnstorableText(decoded)) throw new ValidationError('invalid path: contains a NUL character', [{ path: 'path', message: 'contains a NUL character or an unpaired UTF-16 surrogate' }]);
  }
  return next();
};
