import type Koa from 'koa';
import type { z } from 'zod';
import { MethodNotAllowedError, NotFoundError, ValidationError, toAppError, type ErrorDetail } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { type EncodedJson, encodeJsonText } from './conditional-get.ts';

/** The success envelope (spec "Response envelope"). */
export const ok = <T>(data: T): { data: T; error: null } => ({ data, error: null });

/**
 * A route's `data` as JSON text already (the database wrote it): the route table sends it in the envelope as it is,
 * byte for byte what `ok` of the parsed value would serialize to, without building and serializing the objects.
 */
export class JsonText {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** The success envelope around `data`'s JSON text, encoded, with its ETag (conditionalGet sends it as it is). */
export const okEncoded = (data: JsonText): EncodedJson => encodeJsonText(`{"data":${data.text},"error":null}`);

/** Validates `value` with `schema`; a failure is a 400 whose details name every bad field. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, what = 'request'): z.infer<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  // An unknown field (strict objects: no mass assignment) is named by its own path, one detail per field.
  const details: ErrorDetail[] = r.error.issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) => ({ path: formatPath([...i.path, k]), message: 'is not a known field' }))
      : [{ path: formatPath(i.path), message: i.message }],
  );
  const first = details[0];
  throw new ValidationError(`invalid ${what}: ${first.path ? `${first.path}: ` : ''}${first.message}`, details);
}

/** `['events', 3, 'x']` → `events[3].x` */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out;
}

/** A failed request's answer: status, Retry-After on 429/503, and the error envelope. */
export interface ErrorAnswer {
  status: number;
  retryAfter?: string;
  body: { data: null; error: Record<string, unknown> };
}

/**
 * The one error path: every failure (thrown AppError, Koa http error, unmatched route, crash) leaves as
 * `{data: null, error: {code, message, status, details?}}`, with Retry-After on 429/503. A 500's own message stays
 * in the log (with the request id): it may name internals.
 */
export function errorAnswer(
  err: unknown,
  log: Logger,
  request: { requestId?: string; method: string; path: string },
): ErrorAnswer {
  const e = toAppError(err);
  if (e.status >= 500 && e.status !== 503)
    log.error({ err, request_id: request.requestId, method: request.method, path: request.path }, 'request failed');
  const error: Record<string, unknown> = {
    code: e.code,
    message: e.status === 500 ? 'internal server error' : e.message,
    status: e.status,
  };
  if (e.details !== undefined) error.details = e.details;
  return {
    status: e.status,
    retryAfter: e.retryAfterSec === undefined ? undefined : String(e.retryAfterSec),
    body: { data: null, error },
  };
}

/** The error path as Koa middleware (unmatched routes and methods end in it too). */
export function errorEnvelope(log: Logger): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
      // A method the router does not know (501) on a path no route matches has no Allow: there is no route, so 404.
      const noRoute = ctx.status === 404 || ((ctx.status === 405 || ctx.status === 501) && !ctx.response.get('Allow'));
      if (noRoute && !ctx.body) throw new NotFoundError(`no route for ${ctx.method} ${ctx.path}`);
      if ((ctx.status === 405 || ctx.status === 501) && !ctx.body) {
        throw new MethodNotAllowedError(
          `${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get('Allow') || 'none'}`,
        );
      }
    } catch (err) {
      const answer = errorAnswer(err, log, { requestId: ctx.state.requestId, method: ctx.method, path: ctx.path });
      ctx.status = answer.status;
      if (answer.retryAfter !== undefined) ctx.set('Retry-After', answer.retryAfter);
      ctx.body = answer.body;
    }
  };
}
