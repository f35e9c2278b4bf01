import type Koa from 'koa';

/**
 * CORS for browser ingestion: any origin may post batches (the publishable key, not the origin, authorizes),
 * and preflights are answered without touching the route. Credentials are never allowed.
 */
export function ingestCors(paths: string[]): Koa.Middleware {
  return async (ctx, next) => {
    // The router matches a trailing slash too (non-strict), so CORS must as well.
    if (!paths.includes(ctx.path.length > 1 ? ctx.path.replace(/\/+$/, '') : ctx.path)) return next();
    const origin = ctx.get('Origin');
    if (ctx.method === 'OPTIONS') {
      setAllowOrigin((name, value) => ctx.set(name, value), origin);
      ctx.set('Access-Control-Allow-Methods', 'POST, GET, OPTIONS');
      ctx.set('Access-Control-Allow-Headers', 'Authorization, Content-Type, Content-Encoding');
      ctx.set('Access-Control-Max-Age', '86400');
      ctx.status = 204;
      return;
    }
    setIngestCorsHeaders((name, value) => ctx.set(name, value), origin);
    await next();
  };
}

/** The CORS fields of an answer (not a preflight) on an ingest path, errors included. */
export function setIngestCorsHeaders(set: (name: string, value: string) => void, origin: string | undefined): void {
  setAllowOrigin(set, origin);
  set(
    'Access-Control-Expose-Headers',
    'Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, X-Request-Id',
  );
}

function setAllowOrigin(set: (name: string, value: string) => void, origin: string | undefined): void {
  if (!origin) return;
  set('Access-Control-Allow-Origin', '*');
  set('Vary', 'Origin');
}
