import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { BlockList } from 'node:net';
import type { Logger } from '../logger.ts';
import { clientAddress } from './client-address.ts';
import { setIngestCorsHeaders } from './cors.ts';
import { errorAnswer } from './envelope.ts';
import { assertStorableUrl, requestIdFor, requestRecorder } from './every-request.ts';

/** What a direct route reads of a request: the Node request (headers, body stream) and the client's address. */
export interface DirectRequest {
  req: IncomingMessage;
  ip: string;
}

/** A route's answer: status and envelope. Header fields go through `set` as they are decided (kept on errors). */
export interface DirectAnswer {
  status: number;
  body: unknown;
}

export type DirectHandler = (
  request: DirectRequest,
  set: (name: string, value: string) => void,
) => Promise<DirectAnswer>;

/**
 * A route served straight from node:http instead of through Koa's middleware chain: the ingest hot path, where the
 * chain (context objects, eight middleware, two routers) cost more CPU per SDK batch than the route's own work. It
 * gets what every request gets (request id, client address, storable-URL check, error envelope, metric and log line)
 * from the same functions the chain uses, and the same route stays registered in Koa (same handler), which serves
 * the paths and methods this does not match exactly (405s, case variants) and is the reference a test holds this to.
 */
export interface DirectRoute {
  method: string;
  path: string;
  /** Answers carry the ingest CORS fields (the path is one of the role's CORS paths). */
  cors?: boolean;
  handle: DirectHandler;
}

export interface DirectOptions {
  role: string;
  log: Logger;
  level: 'info' | 'debug';
  trusted: BlockList | null;
}

/** Serves `routes` directly (their path with or without one trailing slash, any query) and hands the rest to `fallback`. */
export function directListener(fallback: RequestListener, routes: DirectRoute[], opts: DirectOptions): RequestListener {
  if (routes.length === 0) return fallback;
  const byTarget = new Map<string, DirectRoute>();
  for (const r of routes) {
    byTarget.set(`${r.method} ${r.path}`, r);
    byTarget.set(`${r.method} ${r.path}/`, r);
  }
  const record = requestRecorder(opts.role, opts.log, opts.level);
  return (req, res) => {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const route = byTarget.get(`${req.method} ${path}`);
    if (!route) return fallback(req, res);
    const start = performance.now();
    serve(route, req, res, path, q < 0 ? '' : url.slice(q + 1), opts)
      .then(({ status, requestId }) =>
        record({ route: route.path, status, ms: performance.now() - start, requestId, method: req.method ?? '', path }),
      )
      .catch((err: unknown) => {
        // Only a failure of the error path or the record gets here (never an unhandled rejection, which would end the
        // process); the answer may be half written, so the connection goes.
        opts.log.error({ err, method: req.method, path }, 'request failed outside the error path');
        res.destroy();
      });
  };
}

async function serve(
  route: DirectRoute,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  querystring: string,
  opts: DirectOptions,
): Promise<{ status: number; requestId: string }> {
  const requestId = requestIdFor(req.headers['x-request-id'] as string | undefined);
  const set = (name: string, value: string) => res.setHeader(name, value);
  set('X-Request-Id', requestId);
  let answer: DirectAnswer;
  try {
    // In the order Koa's chain meets them: a URL no route could store is refused before CORS fields are set.
    assertStorableUrl(path, querystring);
    if (route.cors) setIngestCorsHeaders(set, req.headers.origin);
    // Node joins repeated header lines with ", " (only Set-Cookie stays a list), as Koa's ctx.get sees them.
    const ip = clientAddress(
      req.socket.remoteAddress ?? '',
      req.headers['x-forwarded-for'] as string | undefined,
      opts.trusted,
    );
    answer = await route.handle({ req, ip }, set);
  } catch (err) {
    const failed = errorAnswer(err, opts.log, { requestId, method: req.method ?? '', path });
    if (failed.retryAfter !== undefined) set('Retry-After', failed.retryAfter);
    answer = failed;
  }
  const text = JSON.stringify(answer.body);
  res.statusCode = answer.status;
  set('Content-Type', 'application/json; charset=utf-8');
  set('Content-Length', String(Buffer.byteLength(text)));
  res.end(text);
  return { status: answer.status, requestId };
}
