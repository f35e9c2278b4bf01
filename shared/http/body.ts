import { createGunzip, createInflate } from 'node:zlib';
import type Koa from 'koa';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../errors.ts';

/**
 * Reads the request body as UTF-8 text, inflating gzip/deflate, refusing more than `limitBytes` of either
 * the encoded or the inflated body (413) so a small compressed bomb cannot balloon in memory.
 */
export async function readTextBody(ctx: Koa.Context, limitBytes: number): Promise<string> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limitBytes) throw new PayloadTooLargeError(limitBytes);
  const encoding = (ctx.get('content-encoding') || 'identity').toLowerCase();
  let source: NodeJS.ReadableStream = ctx.req;
  if (encoding === 'gzip') source = ctx.req.pipe(createGunzip());
  else if (encoding === 'deflate') source = ctx.req.pipe(createInflate());
  else if (encoding !== 'identity') throw new UnsupportedMediaTypeError(`content-encoding ${encoding} is not supported`);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limitBytes) throw new PayloadTooLargeError(limitBytes);
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof PayloadTooLargeError) {
      ctx.req.resume();
      throw err;
    }
    throw new ValidationError(`could not read the request body: ${(err as Error).message}`);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses a JSON body; a syntax error is a 400. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ValidationError(`body is not valid JSON: ${(err as Error).message}`, [{ path: '', message: 'invalid JSON' }]);
  }
}

/** Reads a JSON body of a write request; `application/json` is required, as the spec says. */
export async function readJsonBody(ctx: Koa.Context, limitBytes: number): Promise<unknown> {
  if (!ctx.is('application/json')) throw new UnsupportedMediaTypeError('Content-Type must be application/json');
  return parseJson(await readTextBody(ctx, limitBytes));
}
