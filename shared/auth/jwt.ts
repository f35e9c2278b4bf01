import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { Uuid } from '../contracts/uuid.ts';

/**
 * User tokens: compact JWS with HS256 only. The header must say exactly `HS256`, so `alg: none` and
 * algorithm-confusion tokens are refused before any signature check; the signature is compared in
 * constant time; `exp` is required and strictly enforced (no leeway).
 */
export const UserClaimsSchema = z.object({
  /** The user id. */
  sub: Uuid(),
  /** The org this token acts in: one token, one org (login picks it). */
  org: Uuid(),
  /** The session (login) this token belongs to: logout and password change end it, and with it every token of it. */
  sid: Uuid(),
  iat: z.number().int().nonnegative(),
  exp: z.number().int().positive(),
  iss: z.literal('friction'),
});
export type UserClaims = z.infer<typeof UserClaimsSchema>;

const HeaderSchema = z.object({ alg: z.literal('HS256'), typ: z.literal('JWT').optional() });

const b64 = (v: Buffer | string): string => Buffer.from(v).toString('base64url');

function sign(input: string, key: Buffer): Buffer {
  return createHmac('sha256', key).update(input).digest();
}

/** Signs the claims for `ttlSec` seconds from `nowMs` (never past `notAfter`). Returns the token and its expiry. */
export function signUserToken(
  key: Buffer,
  c: { userId: string; orgId: string; sessionId: string; notAfter?: Date },
  ttlSec: number,
  nowMs = Date.now(),
): { token: string; expiresAt: Date } {
  const iat = Math.floor(nowMs / 1000);
  const cap = c.notAfter ? Math.floor(c.notAfter.getTime() / 1000) : Number.MAX_SAFE_INTEGER;
  const claims: UserClaims = {
    sub: c.userId,
    org: c.orgId,
    sid: c.sessionId,
    iat,
    exp: Math.min(iat + ttlSec, cap),
    iss: 'friction',
  };
  const input = `${b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64(JSON.stringify(claims))}`;
  return { token: `${input}.${b64(sign(input, key))}`, expiresAt: new Date(claims.exp * 1000) };
}

/** The verified claims, or null for anything malformed, unsigned, wrongly signed or expired. */
export function verifyUserToken(key: Buffer, token: string, nowMs = Date.now()): UserClaims | null {
  const parts = token.split('.');
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]+$/.test(p))) return null;
  const header = HeaderSchema.safeParse(parseSegment(parts[0]));
  if (!header.success) return null;
  const expected = sign(`${parts[0]}.${parts[1]}`, key);
  const actual = Buffer.from(parts[2], 'base64url');
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return null;
  const claims = UserClaimsSchema.safeParse(parseSegment(parts[1]));
  if (!claims.success) return null;
  if (claims.data.exp <= Math.floor(nowMs / 1000)) return null;
  return claims.data;
}

/** Tells a JWT from an API key by shape: keys carry a `svc_` prefix and no dots. */
export function looksLikeJwt(credential: string): boolean {
  return credential.split('.').length === 3 && !credential.startsWith('svc_');
}

function parseSegment(segment: string): unknown {
  try {
    return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
}
