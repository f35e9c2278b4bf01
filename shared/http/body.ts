import type { IncomingMessage } from 'node:http';
import { createGunzip, createInflate } from 'node:zlib';
import type Koa from 'koa';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError } from '../errors.ts';
import { scanJson } from '../text.ts';

/**
 * Reads the request body as UTF-8 text, inflating gzip/deflate, refusing more than `limitBytes` of either
 * the encoded or the inflated body (413) so a small compressed bomb cannot balloon in memory.
 */
export async function readTextBody(req: IncomingMessage, limitBytes: number): Promise<string> {
  const declared = Number(req.headers['content-length'] || 0);
  if (declared > limitBytes) throw new PayloadTooLargeError(limitBytes);
  const encoding = (req.headers['content-encoding'] || 'identity').toLowerCase();
  let source: NodeJS.ReadableStream = req;
  if (encoding === 'gzip') source = req.pipe(createGunzip());
  else if (encoding === 'deflate') source = req.pipe(createInflate());
  else if (encoding !== 'identity')
    throw new UnsupportedMediaTypeError(`content-encoding ${encoding} is not supported`);
  // Event listeners rather than for-await: this runs for every ingest batch, and async iteration of a
  // stream costs a promise per chunk.
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const fail = (err: Error) => {
      if (done) return;
      done = true;
      source.removeAllListeners('data');
      req.resume();
      reject(err);
    };
    source.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limitBytes) fail(new PayloadTooLargeError(limitBytes));
      else chunks.push(chunk);
    });
    source.once('end', () => {
      if (done) return;
      done = true;
      resolve(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    });
    source.once('error', (err: Error) => fail(new ValidationError(`could not read the request body: ${err.message}`)));
    req.once('aborted', () => fail(new ValidationError('the client aborted the request body')));
  });
}

/** No request body of ours nests deeper; beyond it a body is refused before anything recursive touches it. */
export const MAX_BODY_DEPTH = 32;

/**
 * Parses a JSON body; a syntax error is a 400. The one place every body passes through, so it also refuses (400
 * naming the field) what no route could store: nesting deeper than MAX_BODY_DEPTH, and text PostgreSQL refuses
 * (NUL, unpaired surrogates) in any string or key. With `replaceUnstorable` (ingest: a browser's text is not the
 * visitor's fault) such characters are replaced by U+FFFD instead, so what is accepted can always be stored.
 */
export function parseJson(text: string, opts: { replaceUnstorable?: boolean } = {}): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ValidationError(`body is not valid JSON: ${(err as Error).message}`, [
      { path: '', message: 'invalid JSON' },
    ]);
  }
  const problem = scanJson(value, { maxDepth: MAX_BODY_DEPTH, replace: opts.replaceUnstorable });
  if (problem)
    throw new ValidationError(`invalid body: ${problem.path ? `${problem.path}: ` : ''}${problem.message}`, [problem]);
  return value;
}

/** Reads a JSON body of a write request; `application/json` is required, as the spec says. */
export async function readJsonBody(ctx: Koa.Context, limitBytes: number): Promise<unknown> {
  if (!ctx.is('application/json')) throw new UnsupportedMediaTypeError('Content-Type must be application/json');
  return parseJson(await readTextBody(ctx.req, limitBytes));
}
