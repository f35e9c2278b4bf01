import { createHash } from 'node:crypto';
import { Stream } from 'node:stream';
import type Koa from 'koa';
import { ENCODED_JSON } from './envelope.ts';

/**
 * Conditional reads of the query API: a JSON answer of `GET /v1/query/*` carries a weak ETag (a hash of its body),
 * and a request whose If-None-Match names it is answered 304 without the body. The dashboard's short poll (and any
 * client that keeps the last answer) then moves bytes only when the data changed. `Cache-Control: private, no-cache`
 * lets a browser keep the answer but never reuse it without asking.
 */
export const conditionalGet: Koa.Middleware = async (ctx, next) => {
  await next();
  if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || ctx.status !== 200 || !ctx.path.startsWith('/v1/query/'))
    return;
  const body: unknown = ctx.body;
  // An answer the route table encoded already (okEncoded: JSON text the database wrote) is hashed as it is.
  const encoded = Buffer.isBuffer(body) && ctx.state[ENCODED_JSON] === true;
  if (body === null || typeof body !== 'object' || (Buffer.isBuffer(body) && !encoded) || body instanceof Stream)
    return;
  // Encoded once: the hash and the socket then read the same bytes (a string would be encoded to UTF-8 for each; the
  // scores route's 340 kB answer spent more of its API time there than in building it).
  const json = encoded ? body : Buffer.from(JSON.stringify(body));
  const etag = `W/"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`;
  ctx.set('ETag', etag);
  if (!ctx.response.get('Cache-Control')) ctx.set('Cache-Control', 'private, no-cache');
  if (ifNoneMatch(ctx.get('If-None-Match'), etag)) {
    ctx.body = null;
    ctx.status = 304;
    return;
  }
  ctx.type = 'application/json';
  ctx.body = json;
};

/** RFC 9110 §13.1.2: weak comparison, `*` matches any. */
function ifNoneMatch(header: string, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === bare);
}
