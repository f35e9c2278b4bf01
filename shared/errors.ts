/**
 * The error classes every role shares. `code` and `status` are the public contract (spec "Errors");
 * `retriable` tells stream consumers whether to nak (retry later) or dead-letter.
 */
export interface ErrorDetail {
  path: string;
  message: string;
}

export class AppError extends Error {
  readonly code: string;
  readonly status: number;
  readonly details: ErrorDetail[] | Record<string, unknown> | undefined;
  readonly retriable: boolean;
  /** Seconds; sent as Retry-After on 429 and 503. */
  readonly retryAfterSec: number | undefined;
  constructor(
    code: string,
    status: number,
    message: string,
    opts: {
      details?: ErrorDetail[] | Record<string, unknown>;
      retriable?: boolean;
      retryAfterSec?: number;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause: opts.cause });
    this.code = code;
    this.status = status;
    this.details = opts.details;
    this.retriable = opts.retriable ?? false;
    this.retryAfterSec = opts.retryAfterSec;
  }
}

export class ValidationError extends AppError {
  constructor(message: string, details?: ErrorDetail[]) {
    super('invalid_input', 400, message, { details });
  }
}

/** The base of an error whose code and status are fixed and whose message has a default. */
function fixedError(code: string, status: number, defaultMessage: string) {
  return class extends AppError {
    constructor(message = defaultMessage) {
      super(code, status, message);
    }
  };
}
export class UnauthorizedError extends fixedError('unauthorized', 401, 'missing, expired or malformed credentials') {}
export class ForbiddenError extends fixedError('forbidden', 403, 'credential lacks the required scope') {}
export class NotFoundError extends fixedError('not_found', 404, 'not found') {}
export class MethodNotAllowedError extends fixedError('method_not_allowed', 405, 'method not allowed') {}
export class ConflictError extends AppError {
  constructor(message: string, cause?: unknown) {
    super('conflict', 409, message, { cause });
  }
}
export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number) {
    super('payload_too_large', 413, `request body exceeds ${limitBytes} bytes`, {
      details: { limit_bytes: limitBytes },
    });
  }
}
export class UnsupportedMediaTypeError extends AppError {
  constructor(message: string) {
    super('unsupported_media_type', 415, message);
  }
}
export class RateLimitedError extends AppError {
  constructor(retryAfterSec: number, message = 'rate limit exceeded') {
    super('rate_limited', 429, message, { retryAfterSec, retriable: true });
  }
}
export class UnavailableError extends AppError {
  constructor(message: string, retryAfterSec = 5, cause?: unknown) {
    super('unavailable', 503, message, { retryAfterSec, retriable: true, cause });
  }
}
export class InternalError extends AppError {
  constructor(cause?: unknown) {
    super('server_error', 500, 'internal server error', { cause });
  }
}

const FIXED_BY_STATUS = new Map<number, new (message?: string) => AppError>([
  [401, UnauthorizedError],
  [403, ForbiddenError],
  [404, NotFoundError],
  [405, MethodNotAllowedError],
]);

/** Maps anything thrown to an AppError; unknown errors become a 500 that reveals nothing. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as { status?: number; expose?: boolean; message?: string; type?: string };
  if (e && typeof e.status === 'number' && e.expose) {
    if (e.status === 413) return new PayloadTooLargeError(0);
    const Fixed = FIXED_BY_STATUS.get(e.status);
    if (Fixed) return new Fixed(e.message);
    if (e.status >= 400 && e.status < 500) return new AppError('invalid_input', 400, e.message ?? 'bad request');
  }
  // A unique violation is a duplicate write (two identical requests racing, or a repeat): the client's conflict,
  // never a 500. Routes that document an upsert avoid reaching this; everything else answers 409 here, once.
  if (isUniqueViolation(err))
    return new ConflictError('this already exists: a concurrent or repeated request created it', err);
  // A database or network outage is not a bug of the request: 503 with Retry-After, so clients (the SDK) retry.
  if (isRetriable(err)) return new UnavailableError('a backing service is unavailable; retry shortly', 2, err);
  return new InternalError(err);
}

/** Postgres SQLSTATE 23505 (node-postgres and PGlite both carry it as `code`), possibly wrapped as a cause. */
export function isUniqueViolation(err: unknown): boolean {
  for (
    let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 4;
    e = e.cause as typeof e, depth++
  ) {
    if (e.code === '23505') return true;
  }
  return false;
}

/**
 * True when a failure may succeed on retry without any change to the input: a backing service unreachable or
 * overloaded (connection loss, pool or connect timeouts, admin shutdown), a serialization conflict or deadlock,
 * a statement timeout. Stream consumers pause and retry these without limit instead of dead-lettering.
 */
export function isRetriable(err: unknown): boolean {
  if (err instanceof AppError) return err.retriable;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown } | null | undefined;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  // Postgres: connection exceptions (08*), serialization/deadlock (40*), insufficient resources (53*),
  // statement timeout / query canceled (57014), admin or crash shutdown (57P*).
  if (/^(08|40|53|57P)/.test(code) || code === '57014') return true;
  if (NETWORK_CODES.has(code)) return true;
  // node-postgres reports pool and socket failures as plain Errors without a code.
  if (typeof e.message === 'string' && PG_CONNECTION_MESSAGES.some((re) => re.test(e.message as string))) return true;
  // AggregateError (several addresses refused) and wrapped causes.
  if (Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every((x) => isRetriable(x))) return true;
  return e.cause !== undefined && e.cause !== err && isRetriable(e.cause);
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
]);
const PG_CONNECTION_MESSAGES = [
  /^Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Client has encountered a connection error/i,
  /Client was closed and is not queryable/i,
  /^Query read timeout$/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
];

/**
 * True when a failure says the database or its schema is not what this code expects, which no message can cause
 * and no message can cure: an undefined column, table or function and the rest of SQLSTATE class 42 (a processor
 * started before its migration ran, a migration rolled back), missing privileges (42501), a lock that could not be
 * taken (55P03) or an object in use (55006), a read-only transaction (25006: a failover to a replica), an unknown
 * database or schema (3D000, 3F000), rejected credentials (28*). Statements are built with parameters, so a row's
 * content surfaces as a data or integrity error (22*, 23*), never as one of these.
 */
export function isEnvironmentFault(err: unknown): boolean {
  for (
    let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0;
    e && typeof e === 'object' && depth < 4;
    e = e.cause as typeof e, depth++
  ) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (/^(42|28|3D|3F)/.test(code) || code === '55P03' || code === '55006' || code === '25006') return true;
  }
  return false;
}

/**
 * Why an attempt failed, as a stream consumer must treat it: `unavailable` (a backing service is unreachable or
 * overloaded: wait for it), `environment` (the schema or the permissions are wrong: pause until an operator fixes
 * them), `content` (possibly the message's own fault: isolate it).
 */
export type FailureCause = 'unavailable' | 'environment' | 'content';

export function failureCause(err: unknown): FailureCause {
  if (isEnvironmentFault(err)) return 'environment';
  return isRetriable(err) ? 'unavailable' : 'content';
}
