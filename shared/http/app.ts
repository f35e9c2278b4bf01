import type { RequestListener } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import type { Logger } from '../logger.ts';
import { clientAddressMiddleware, trustedProxyList } from './client-address.ts';
import { directListener, type DirectRoute } from './direct-routes.ts';
import { errorEnvelope, ok } from './envelope.ts';
import { assertStorableUrl, requestIdFor, requestRecorder } from './every-request.ts';
import { conditionalGet } from './conditional-get.ts';

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

/** What a server listens with: the app, and in front of it the direct routes (each also registered in the app). */
export function httpListener(opts: HttpAppOptions & { direct?: DirectRoute[] }): RequestListener {
  const app = createHttpApp(opts);
  return directListener(app.callback(), opts.direct ?? [], {
    role: opts.role,
    log: opts.log,
    level: opts.requestLogLevel ?? 'info',
    trusted: trustedProxyList(opts.trustedProxies ?? ''),
  });
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
  const record = requestRecorder(role, log, level);
  app.use(async (ctx, next) => {
    const start = performance.now();
    const requestId = requestIdFor(ctx.get('X-Request-Id'));
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      record({
        route,
        status: ctx.status,
        ms: performance.now() - start,
        requestId,
        method: ctx.method,
        path: ctx.path,
      });
    }
  });
  app.use(errorEnvelope(log));
  app.use(refuseUnstorableUrl);
  app.use(unversionedAliases);
  for (const mw of opts.before ?? []) app.use(mw);
  app.use(optionsInEnvelope);
  app.use(conditionalGet);
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

/** A URL no route could store (NUL, unpaired surrogates) is a 400 before any route runs. */
const refuseUnstorableUrl: Koa.Middleware = (ctx, next) => {
  assertStorableUrl(ctx.path, ctx.querystring);
  return next();
};
