import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.ts';
import { ValidationError } from '../errors.ts';
import { hasUnstorableText } from '../text.ts';
import { httpDuration, httpRequests } from './metrics.ts';

// What every request gets, whether Koa's middleware chain serves it or a direct route (direct-routes.ts) does.

/**
 * A request id in the log line and the X-Request-Id header of every answer (errors included), so a user's report of
 * an error finds its log line. A caller's (or proxy's) own id is kept when it looks like one. Not in the body: a
 * refused request for another tenant's object must stay byte for byte the answer to a random id.
 */
export function requestIdFor(given: string | undefined): string {
  return given && /^[\w.:-]{8,128}$/.test(given) ? given : randomUUID();
}

export interface RequestRecord {
  route: string;
  status: number;
  ms: number;
  requestId: string;
  method: string;
  path: string;
}

/**
 * One metric and one log line per request (at the role's level; 5xx at error, except 503: a refusal with Retry-After
 * whose cause the role logs once, such as ingest shedding load or the stream gone, not a line per refused request).
 */
export function requestRecorder(role: string, log: Logger, level: 'info' | 'debug'): (r: RequestRecord) => void {
  return (r) => {
    httpRequests.inc({ role, route: r.route, status: r.status });
    httpDuration.observe({ role, route: r.route }, r.ms / 1000);
    const lineLevel = r.status >= 500 && r.status !== 503 ? 'error' : level;
    if (log.isLevelEnabled(lineLevel))
      log[lineLevel](
        { request_id: r.requestId, method: r.method, path: r.path, status: r.status, ms: Math.round(r.ms * 10) / 10 },
        'request',
      );
  };
}

/**
 * Query parameters and path segments are text that routes compare with or store in PostgreSQL, which refuses NUL
 * (and unpaired surrogates): checked once for every request, as a 400 naming the parameter, instead of a 500 in
 * whichever query first meets it.
 */
export function assertStorableUrl(path: string, querystring: string): void {
  if (querystring.includes('%')) {
    for (const [name, value] of new URLSearchParams(querystring)) {
      if (hasUnstorableText(value) || hasUnstorableText(name)) {
        throw new ValidationError(`invalid query: ${name}: contains a NUL character or an unpaired UTF-16 surrogate`, [
          { path: name, message: 'contains a NUL character or an unpaired UTF-16 surrogate' },
        ]);
      }
    }
  }
  if (path.includes('%')) {
    let decoded: string | undefined;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      throw new ValidationError('invalid path: malformed percent-encoding', [
        { path: 'path', message: 'malformed percent-encoding' },
      ]);
    }
    if (hasUnstorableText(decoded))
      throw new ValidationError('invalid path: contains a NUL character', [
        { path: 'path', message: 'contains a NUL character or an unpaired UTF-16 surrogate' },
      ]);
  }
}
