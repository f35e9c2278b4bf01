import type Koa from 'koa';
import type { KeyResolver } from '../../shared/auth/key-resolver.ts';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../../shared/errors.ts';

/** Who is calling. API keys now; user JWTs join this union with the management plane. */
export interface KeyPrincipal {
  kind: 'key';
  keyId: string;
  orgId: string;
  siteId: string | null;
  keyType: string;
  scopes: readonly string[];
}
export type Principal = KeyPrincipal;

export interface AuthState {
  principal: Principal;
}

/**
 * The one auth middleware: a Bearer credential must resolve (else 401) and carry one of `anyScope` (else 403).
 * Publishable keys never pass here: they are for ingest only.
 */
export function authenticate(keys: KeyResolver, anyScope: readonly string[]): Koa.Middleware {
  return async (ctx, next) => {
    const header = ctx.get('authorization');
    const m = /^Bearer\s+(\S+)$/i.exec(header);
    if (!m) throw new UnauthorizedError(header ? 'Authorization header must be "Bearer <key>"' : 'missing Authorization header');
    const rec = await keys.resolve(m[1]);
    if (!rec) throw new UnauthorizedError('unknown, revoked or malformed API key');
    if (rec.keyType === 'publishable' || !anyScope.some((s) => rec.scopes.includes(s))) {
      throw new ForbiddenError(`this key lacks the required scope (${anyScope.join(' or ')})`);
    }
    (ctx.state as AuthState).principal = { kind: 'key', keyId: rec.id, orgId: rec.orgId, siteId: rec.siteId, keyType: rec.keyType, scopes: rec.scopes };
    await next();
  };
}

/**
 * A site the principal may see. Another site's id answers exactly like a missing one (404), so ids of
 * other tenants cannot be probed.
 */
export function requireSite(principal: Principal, siteId: string): void {
  if (principal.siteId !== null && principal.siteId !== siteId) throw new NotFoundError('site not found');
}
