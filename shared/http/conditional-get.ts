import { createHash } from 'node:crypto';
import { Stream } from 'node:stream';
import type Koa from 'koa';

/**
 * Conditional reads of the query API: a JSON answer of `GET /v1/query/*` carries a weak ETag (a hash of its body),
 * and a request whose If-None-Match names it is answered 304 without the body. The dashboard's short poll (and any
 * client that keeps the last answer) then moves bytes only when the data changed. `Cache-Control: private, no-cache`
 * lets a browser keep the answer but never reuse it without asking.
 */
export const conditionalGet: Koa.Middleware = async (ctx, next) => {
  await next();
  const body: unknown = ctx.body;
  const eligible =
    (ctx.method === 'GET' || ctx.method === 'HEAD') && ctx.status === 200 && ctx.path.startsWith('/v1/query/');
  if (!eligible) {
    // An answer a route encoded itself (EncodedJson) leaves as its bytes wherever it is served.
    if (body instanceof EncodedJson) {
      ctx.type = 'application/json';
      ctx.body = body.json;
    }
    return;
  }
  if (body === null || typeof body !== 'object' || Buffer.isBuffer(body) || body instanceof Stream) return;
  // Encoded once: the hash and the socket then read the same bytes (a string would be encoded to UTF-8 for each; the
  // scores route's 340 kB answer spent more of its API time there than in building it). A route that keeps its
  // encoded answer (the scores route's answer cache) hands it over as it is.
  const { json, etag } = body instanceof EncodedJson ? body : encodeJson(body);
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

/** A JSON answer already encoded, with its weak ETag: what conditionalGet would send for the same value. */
export class EncodedJson {
  readonly json: Buffer;
  readonly etag: string;
  constructor(json: Buffer, etag: string) {
    this.json = json;
    this.etag = etag;
  }
}

/** `value` as UTF-8 JSON and its weak ETag (a hash of those bytes). */
export function encodeJson(value: unknown): EncodedJson {
  return encodeJsonText(JSON.stringify(value));
}

/** JSON text already written (by the database, or a cache) as UTF-8 bytes and its weak ETag. */
export function encodeJsonText(text: string): EncodedJson {
  const json = Buffer.from(text);
  return new EncodedJson(json, `W/"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`);
}

/** RFC 9110 §13.1.2: weak comparison, `*` matches any. */
function ifNoneMatch(header: string, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === bare);
}
