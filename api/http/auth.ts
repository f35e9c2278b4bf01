import type Koa from 'koa';
import type { Kysely } from 'kysely';
import type { KeyResolver } from '../../shared/auth/key-resolver.ts';
import type { InstanceKeys } from '../../shared/auth/instance-keys.ts';
import { looksLikeJwt, verifyUserToken } from '../../shared/auth/jwt.ts';
import type { Database } from '../../shared/db/database.ts';
import { loadMemberContext } from '../../shared/db/queries/accounts.queries.ts';
import { liveSiteIdsOfOrg } from '../../shared/db/queries/sites.queries.ts';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../../shared/errors.ts';
import type { Role } from '../../shared/tenancy/accounts.ts';
import type { SurfaceLimits } from './rate-limit.ts';
import { renewToken } from '../../shared/auth/sessions.ts';
import { cookiesSecure, isSafeMethod, requireCsrf, sessionCookieToken, setSessionCookie } from './browser-session.ts';

/** A secret or MCP key. Publishable keys never become principals here: they are for ingest only. */
export interface KeyPrincipal {
  kind: 'key';
  keyId: string;
  orgId: string;
  siteId: string | null;
  keyType: string;
  scopes: readonly string[];
  /** Sites this key reaches: its own site (every key the API issues is site-scoped). */
  siteIds: ReadonlySet<string>;
  /** Display form for the audit log: the key's first characters. */
  label: string;
}

/** A user acting in the org their token was issued for, with their current role there. */
export interface UserPrincipal {
  kind: 'user';
  userId: string;
  email: string;
  orgId: string;
  role: Role;
  /** The org's live sites. */
  siteIds: ReadonlySet<string>;
  label: string;
  /** The token's session (absent on the principals auth routes make for audit entries), and this token's own end. */
  session?: { id: string; expiresAt: Date; tokenExpiresAt?: Date };
}
export type Principal = KeyPrincipal | UserPrincipal;

export interface AuthState {
  principal: Principal;
  /** The credential came from the browser session cookie (browser-session.ts), not an Authorization header. */
  viaCookie?: boolean;
}

/** Which rate-limit bucket a route counts against (spec "Limits"). */
export type Surface = 'read' | 'manage' | 'guide';

/**
 * Who may call a route. Checks run in a fixed order, so answers never reveal other tenants' objects:
 * 1. credential (401 when missing, malformed, unknown, revoked or expired);
 * 2. credential kind and key scopes, properties of the credential alone (403: publishable keys outside
 *    ingest, keys lacking every one of `scopes`, any key when `scopes` is empty);
 * 3. tenancy, once the route knows its target (404, identical for another tenant's object and a random id);
 * 4. the user's role in that org (403) — a role only means something inside its org, so it comes after 3.
 */
export interface AccessRule {
  surface: Surface;
  /** A key needs one of these scopes; empty means user tokens only. */
  scopes: readonly string[];
  /** Roles whose users may call the route. */
  roles: readonly Role[];
}

export const ALL_ROLES: readonly Role[] = ['owner', 'admin', 'member', 'viewer'];
export const EDITOR_ROLES: readonly Role[] = ['owner', 'admin', 'member'];
export const ADMIN_ROLES: readonly Role[] = ['owner', 'admin'];
export const OWNER_ROLES: readonly Role[] = ['owner'];

/** Scopes that may call read routes: secret keys with query:read, MCP keys with mcp:read. */
export const READ_SCOPES = ['query:read', 'mcp:read'] as const;
export const MANAGE_SCOPES = ['manage:write'] as const;

/** Every read route: any role, or a key that may read. */
export const READ_ACCESS: AccessRule = { surface: 'read', scopes: READ_SCOPES, roles: ALL_ROLES };
/** A management read: any role, or a key that may manage. */
export const MANAGE_READ_ACCESS: AccessRule = { surface: 'manage', scopes: MANAGE_SCOPES, roles: ALL_ROLES };
/** An administrator's management write (owner, admin), or a key that may manage. */
export const MANAGE_ADMIN_ACCESS: AccessRule = { surface: 'manage', scopes: MANAGE_SCOPES, roles: ADMIN_ROLES };
/** A management write: an editor (owner, admin, member), or a key that may manage. */
export const MANAGE_WRITE_ACCESS: AccessRule = { surface: 'manage', scopes: MANAGE_SCOPES, roles: EDITOR_ROLES };

export interface AuthDeps {
  db: Kysely<Database>;
  keys: KeyResolver;
  instanceKeys: InstanceKeys;
  limits: SurfaceLimits;
  /** Browser sessions: the token life renewals get, and the public base URL (https there makes cookies Secure). */
  cookies: { tokenTtlSec: number; sessionMaxSec: number; publicBaseUrl: string | undefined };
}

/**
 * The one auth middleware of the API: resolves the Bearer credential (API key or user JWT) into a principal,
 * applies the credential-level checks of `rule` (steps 1-2 above) and the rule's rate limit. Tenancy and role
 * (steps 3-4) need the route's target: routes call `requireSite` or a route guard (routes.ts).
 */
export function authenticate(deps: AuthDeps, rule: AccessRule): Koa.Middleware {
  return async (ctx, next) => {
    let principal: Principal;
    const header = ctx.get('authorization');
    // An Authorization header wins: API clients and the cookie never mix, and a header cannot be forged cross-site.
    const cookieToken = header ? undefined : sessionCookieToken(ctx);
    try {
      principal = await resolvePrincipal(deps, cookieToken ? `Bearer ${cookieToken}` : header);
      if (cookieToken) await browserSession(ctx, deps, principal);
    } catch (err) {
      // A request without a valid credential counts against its address: beyond the limit it is a 429, so guessing
      // keys or tokens (or flooding anonymously) is bounded per IP.
      if (err instanceof UnauthorizedError) await deps.limits.unauthenticated(ctx);
      throw err;
    }
    if (principal.kind === 'key' && !rule.scopes.some((s) => principal.scopes.includes(s))) {
      throw new ForbiddenError(
        rule.scopes.length === 0
          ? 'this route needs a user token (Authorization: Bearer <JWT>), not an API key'
          : `this key lacks the required scope (${rule.scopes.join(' or ')})`,
      );
    }
    (ctx.state as AuthState).principal = principal;
    await deps.limits.enforce(ctx, rule.surface, principal);
    await next();
  };
}

/**
 * A request the session cookie authenticates: only user tokens come in cookies, unsafe methods need the CSRF token,
 * and a token past half its life is renewed into a fresh cookie, so an active dashboard stays signed in until the
 * session's own end (logout, password change, SESSION_MAX_SECONDS) while every token stays short-lived.
 */
async function browserSession(ctx: Koa.Context, deps: AuthDeps, principal: Principal): Promise<void> {
  if (principal.kind !== 'user' || !principal.session)
    throw new UnauthorizedError('the session cookie must hold a user token');
  const key = await deps.instanceKeys.jwtKey();
  if (!isSafeMethod(ctx.method)) requireCsrf(ctx, key, principal.session.id);
  (ctx.state as AuthState).viaCookie = true;
  const s = principal.session;
  const now = Date.now();
  if (s.tokenExpiresAt && s.tokenExpiresAt.getTime() - now < (deps.cookies.tokenTtlSec * 1000) / 2) {
    const t = await renewToken(
      deps.instanceKeys,
      { userId: principal.userId, orgId: principal.orgId, sessionId: s.id, sessionExpiresAt: s.expiresAt },
      deps.cookies,
      new Date(now),
    );
    setSessionCookie(ctx, t, cookiesSecure(ctx, deps.cookies.publicBaseUrl));
  }
}

async function resolvePrincipal(deps: AuthDeps, header: string): Promise<Principal> {
  const m = /^Bearer\s+(\S+)$/i.exec(header);
  if (!m)
    throw new UnauthorizedError(
      header ? 'Authorization header must be "Bearer <credential>"' : 'missing Authorization header',
    );
  const credential = m[1];
  if (looksLikeJwt(credential)) {
    const claims = verifyUserToken(await deps.instanceKeys.jwtKey(), credential);
    if (!claims) throw new UnauthorizedError('invalid or expired user token');
    const member = await loadMemberContext(deps.db, claims.sub, claims.org, claims.sid);
    if (!member)
      throw new UnauthorizedError(
        "this token's session has ended (logout, password change) or its user is no longer a member of its organization",
      );
    return {
      kind: 'user',
      userId: claims.sub,
      email: member.email,
      orgId: claims.org,
      role: member.role as Role,
      siteIds: new Set(member.siteIds),
      label: member.email,
      session: { id: claims.sid, expiresAt: member.sessionExpiresAt, tokenExpiresAt: new Date(claims.exp * 1000) },
    };
  }
  const rec = await deps.keys.resolve(credential);
  if (!rec) throw new UnauthorizedError('unknown, revoked or malformed API key');
  if (rec.keyType === 'publishable') throw new ForbiddenError('a publishable key only sends events to /v1/ingest');
  const siteIds = rec.siteId ? [rec.siteId] : await liveSiteIdsOfOrg(deps.db, rec.orgId);
  return {
    kind: 'key',
    keyId: rec.id,
    orgId: rec.orgId,
    siteId: rec.siteId,
    keyType: rec.keyType,
    scopes: rec.scopes,
    siteIds: new Set(siteIds),
    label: `${credential.slice(0, 12)}…`,
  };
}

/**
 * A site the principal may see. Another tenant's site answers exactly like a missing one (404), so ids of
 * other tenants cannot be probed.
 */
export function requireSite(principal: Principal, siteId: string, notFound = 'site not found'): void {
  if (!principal.siteIds.has(siteId)) throw new NotFoundError(notFound);
}

/** An org the principal acts in; another org answers like a missing one. */
export function requireOrg(principal: Principal, orgId: string, notFound = 'organization not found'): void {
  if (principal.orgId !== orgId) throw new NotFoundError(notFound);
}

/** Step 4: a user's role must be one of `roles`. Keys passed their scope check in the middleware. */
export function requireRole(principal: Principal, roles: readonly Role[]): void {
  if (principal.kind === 'user' && !roles.includes(principal.role)) {
    throw new ForbiddenError(`this action needs one of the roles ${roles.join(', ')} (you are ${principal.role})`);
  }
}
