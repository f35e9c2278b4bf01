import { createHmac, timingSafeEqual } from 'node:crypto';
import type Koa from 'koa';
import { ForbiddenError } from '../../shared/errors.ts';

/**
 * Browser sessions (the dashboard): the user token lives in an HttpOnly, SameSite=Strict cookie that page scripts
 * cannot read, so a script injected later cannot carry the session away. Requests the cookie authenticates with an
 * unsafe method must carry the session's CSRF token in `X-CSRF-Token` (a signed, session-bound token, OWASP's
 * "synchronizer token" without server state): the token is an HMAC of the session id under the instance key, which
 * the page reads from `GET /v1/auth/session`. Another site can make the browser send the cookie (SameSite=Strict
 * already stops that in current browsers) but can neither read that answer (no CORS is granted) nor set a custom
 * header without a preflight, which this API never grants.
 */
export const SESSION_COOKIE = 'friction_session';
/**
 * Readable companion of the session cookie, holding no secret: it tells the page that a session may exist, so a
 * visitor who never signed in is shown the sign-in screen without a request that could only answer 401.
 */
export const HINT_COOKIE = 'friction_signed_in';
export const CSRF_HEADER = 'X-CSRF-Token';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export const isSafeMethod = (method: string): boolean => SAFE_METHODS.has(method);

/** The session's CSRF token: derived, so nothing is stored and it dies with the session. */
export function csrfTokenFor(key: Buffer, sessionId: string): string {
  return createHmac('sha256', key).update(`csrf:${sessionId}`).digest('base64url');
}

/** Refuses (403) an unsafe cookie-authenticated request without its session's CSRF token. */
export function requireCsrf(ctx: Koa.Context, key: Buffer, sessionId: string): void {
  const sent = Buffer.from(ctx.get(CSRF_HEADER));
  const expected = Buffer.from(csrfTokenFor(key, sessionId));
  if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) {
    throw new ForbiddenError(
      `a request the session cookie authenticates with ${ctx.method} needs the ${CSRF_HEADER} header (csrf_token of GET /v1/auth/session)`,
    );
  }
}

/** The session cookie's token, when the request carries one. */
export function sessionCookieToken(ctx: Koa.Context): string | undefined {
  const v = ctx.cookies.get(SESSION_COOKIE);
  return v && /^[A-Za-z0-9._-]+$/.test(v) ? v : undefined;
}

/**
 * Secure when the browser reached us over https: a TLS connection here, or a public base URL that is https (TLS
 * ended by a proxy in front). Plain http on localhost keeps working without it.
 */
export function cookiesSecure(ctx: Koa.Context, publicBaseUrl: string | undefined): boolean {
  return ctx.secure || (publicBaseUrl?.startsWith('https:') ?? false);
}

function cookie(name: string, value: string, o: { httpOnly: boolean; secure: boolean; expires: Date }): string {
  return [
    `${name}=${value}`,
    'Path=/',
    `Expires=${o.expires.toUTCString()}`,
    'SameSite=Strict',
    o.httpOnly ? 'HttpOnly' : '',
    o.secure ? 'Secure' : '',
  ]
    .filter(Boolean)
    .join('; ');
}

/** Sets the cookie for a token; it lives as long as the session may (renewal keeps the token inside fresh). */
export function setSessionCookie(
  ctx: Koa.Context,
  t: { token: string; sessionExpiresAt: Date },
  secure: boolean,
): void {
  ctx.append('Set-Cookie', cookie(SESSION_COOKIE, t.token, { httpOnly: true, secure, expires: t.sessionExpiresAt }));
  ctx.append('Set-Cookie', cookie(HINT_COOKIE, '1', { httpOnly: false, secure, expires: t.sessionExpiresAt }));
  // Whatever answer carries a session cookie must never be stored by a cache.
  ctx.set('Cache-Control', 'no-store');
}

export function clearSessionCookie(ctx: Koa.Context, secure: boolean): void {
  ctx.append('Set-Cookie', cookie(SESSION_COOKIE, '', { httpOnly: true, secure, expires: new Date(0) }));
  ctx.append('Set-Cookie', cookie(HINT_COOKIE, '', { httpOnly: false, secure, expires: new Date(0) }));
}
