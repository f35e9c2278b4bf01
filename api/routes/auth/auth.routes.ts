import { renewToken, startSession, type IssuedToken, type SessionPolicy } from '../../../shared/auth/sessions.ts';
import { endSession, endSessionsOfUser } from '../../../shared/db/queries/sessions.queries.ts';
import { decoyHash, hashPassword, verifyPassword } from '../../../shared/auth/passwords.ts';
import { findUserByEmail, findUserById, firstMembershipOrg, insertUser, updatePasswordHash } from '../../../shared/db/queries/accounts.queries.ts';
import { UnauthorizedError, NotFoundError, ConflictError } from '../../../shared/errors.ts';
import { hashApiKey, newId } from '../../../shared/ids.ts';
import { addMember, createOrgWithOwner, type Role } from '../../../shared/tenancy/accounts.ts';
import type { UserPrincipal } from '../../http/auth.ts';
import type { SurfaceLimits } from '../../http/rate-limit.ts';
import type { RouteTable } from '../../http/routes.ts';
import { audit } from '../audit/audit.ts';
import type { ManageDeps } from '../manage/deps.ts';
import { findOrg, findPendingInvitation, hasMembership, markInvitationAccepted } from './auth.queries.ts';
import { AcceptInviteBodySchema, LoginBodySchema, LogoutSchema, PasswordChangeBodySchema, PasswordChangedSchema, SessionSchema, SignupBodySchema, TokenSchema } from './auth.schema.ts';
import { ALL_ROLES, type AccessRule } from '../../http/auth.ts';

/** The caller's own session: user tokens of any role; keys have no session. */
const OWN_SESSION: AccessRule = { surface: 'manage', scopes: [], roles: ALL_ROLES };

const presentToken = (t: IssuedToken) => ({ token: t.token, expires_at: t.expiresAt.toISOString(), session_expires_at: t.sessionExpiresAt.toISOString() });

/** `POST /v1/auth/signup`, `POST /v1/auth/login`, `POST /v1/auth/accept-invite`: the only routes without a credential. */
export function authRoutes(table: RouteTable, deps: ManageDeps, limits: SurfaceLimits): RouteTable {
  const byIp = [limits.byIp()];
  let decoy: Promise<string> | undefined;
  const policy: SessionPolicy = { tokenTtlSec: deps.jwtTtlSec, sessionMaxSec: deps.sessionMaxSec };
  /** A new session (login, signup, accepted invitation) and its first token. */
  const token = async (userId: string, orgId: string) => presentToken(await startSession(deps.db, deps.instanceKeys, { userId, orgId }, policy, deps.now()));
  const actor = (userId: string, email: string, orgId: string, role: Role): UserPrincipal => ({ kind: 'user', userId, email, orgId, role, siteIds: new Set(), label: email });

  table.addPublic(
    {
      method: 'post', path: '/v1/auth/signup', tag: 'auth', status: 201,
      summary: 'Create an account and its organization (you are its owner; the org starts its 3-day trial)',
      body: SignupBodySchema, response: SessionSchema,
      async handler(_ctx, { body }) {
        const passwordHash = await hashPassword(body.password, deps.passwordCost);
        const created = await deps.db.transaction().execute(async (trx) => {
          const c = await createOrgWithOwner(trx, { email: body.email, passwordHash, orgName: body.org_name, plan: body.plan, now: deps.now() });
          await audit(trx, actor(c.userId, body.email, c.orgId, 'owner'), {
            orgId: c.orgId, siteId: null, action: 'org.create', targetType: 'org', targetId: c.orgId,
            summary: { name: body.org_name, plan: body.plan ?? 'grow', owner: body.email, trial_ends_at: c.trialEndsAt.toISOString() },
          });
          return c;
        });
        return {
          user: { id: created.userId, email: body.email },
          org: { id: created.orgId, name: body.org_name, plan: body.plan ?? 'grow', trial_ends_at: created.trialEndsAt.toISOString() },
          role: 'owner',
          ...(await token(created.userId, created.orgId)),
        };
      },
    },
    byIp,
  );

  table.addPublic(
    {
      method: 'post', path: '/v1/auth/login', tag: 'auth',
      summary: 'Exchange email and password for a user token',
      description: 'The token acts in one organization: `org_id`, or the oldest membership. Wrong email, wrong password and a foreign org_id all answer the same 401.',
      body: LoginBodySchema, response: TokenSchema,
      async handler(ctx, { body }) {
        await limits.loginAttempt(ctx, body.email);
        const user = await findUserByEmail(deps.db, body.email);
        // NOTE: an unknown email still costs one scrypt verification, so timing does not reveal accounts.
        const valid = await verifyPassword(body.password, user?.passwordHash ?? (await (decoy ??= decoyHash(deps.passwordCost))));
        if (!user || !valid) throw new UnauthorizedError('invalid email or password');
        const orgId = body.org_id ?? (await firstMembershipOrg(deps.db, user.id));
        if (!orgId || !(await hasMembership(deps.db, user.id, orgId))) throw new UnauthorizedError('invalid email or password');
        return token(user.id, orgId);
      },
    },
    byIp,
  );

  table.addPublic(
    {
      method: 'post', path: '/v1/auth/accept-invite', tag: 'auth', status: 201,
      summary: 'Join an organization with an invitation token',
      description: 'Creates the account when the invited email has none (the password becomes its password); an existing account must give its current password. Answers a token for the inviting organization.',
      body: AcceptInviteBodySchema, response: SessionSchema,
      async handler(_ctx, { body }) {
        const now = deps.now();
        const newHash = await hashPassword(body.password, deps.passwordCost);
        const joined = await deps.db.transaction().execute(async (trx) => {
          const invite = await findPendingInvitation(trx, hashApiKey(body.token), now);
          if (!invite) throw new NotFoundError('invitation not found, expired or already used');
          let user = await findUserByEmail(trx, invite.email);
          if (user && !(await verifyPassword(body.password, user.passwordHash))) throw new UnauthorizedError('this email has an account: give its password');
          if (!user) {
            const id = newId();
            if (!(await insertUser(trx, { id, email: invite.email, passwordHash: newHash }))) throw new ConflictError('an account with this email was just created; retry');
            user = { id, email: invite.email, passwordHash: newHash };
          }
          if (!(await addMember(trx, { orgId: invite.org_id, userId: user.id, role: invite.role as Role }))) throw new ConflictError('already a member of this organization');
          await markInvitationAccepted(trx, invite.id, now);
          await audit(trx, actor(user.id, user.email, invite.org_id, invite.role as Role), {
            orgId: invite.org_id, siteId: null, action: 'member.join', targetType: 'user', targetId: user.id,
            summary: { email: user.email, role: invite.role, invitation_id: invite.id },
          });
          return { user, orgId: invite.org_id, role: invite.role };
        });
        const org = await findOrg(deps.db, joined.orgId);
        return {
          user: { id: joined.user.id, email: joined.user.email },
          org: { id: joined.orgId, name: org?.name ?? '', plan: org?.plan ?? 'grow', trial_ends_at: org?.trial_ends_at?.toISOString() ?? null },
          role: joined.role,
          ...(await token(joined.user.id, joined.orgId)),
        };
      },
    },
    byIp,
  );
  table.add({
    method: 'post', path: '/v1/auth/refresh', tag: 'auth', access: OWN_SESSION,
    summary: 'Renew a user token before it expires',
    description: 'Answers a fresh token of the same session (same user and organization). Renewal works while the session lives: until logout, a password change, or SESSION_MAX_SECONDS after login.',
    response: TokenSchema,
    async handler(_ctx, { principal, guard }) {
      guard.org(principal.orgId, 'organization not found');
      const u = principal as UserPrincipal;
      const session = u.session!;
      return presentToken(await renewToken(deps.instanceKeys, { userId: u.userId, orgId: u.orgId, sessionId: session.id, sessionExpiresAt: session.expiresAt }, policy, deps.now()));
    },
  });

  table.add({
    method: 'post', path: '/v1/auth/logout', tag: 'auth', access: OWN_SESSION,
    summary: 'End this session: its tokens are refused from now on',
    response: LogoutSchema,
    async handler(_ctx, { principal, guard }) {
      guard.org(principal.orgId, 'organization not found');
      const u = principal as UserPrincipal;
      return { logged_out: await endSession(deps.db, u.session!.id, u.userId, deps.now()) };
    },
  });

  table.add({
    method: 'post', path: '/v1/auth/password', tag: 'auth', access: OWN_SESSION,
    summary: 'Change your password; every other session of yours ends',
    description: 'Needs the current password (counted against the account\'s sign-in attempts). The calling session stays; every other session (other devices, a leaked token) ends at once.',
    body: PasswordChangeBodySchema, response: PasswordChangedSchema,
    async handler(ctx, { principal, guard, body }) {
      guard.org(principal.orgId, 'organization not found');
      const u = principal as UserPrincipal;
      await limits.loginAttempt(ctx, u.email);
      const user = await findUserById(deps.db, u.userId);
      if (!user || !(await verifyPassword(body.current_password, user.passwordHash))) throw new UnauthorizedError('current_password is wrong');
      const newHash = await hashPassword(body.new_password, deps.passwordCost);
      const ended = await deps.db.transaction().execute(async (trx) => {
        await updatePasswordHash(trx, u.userId, newHash);
        const n = await endSessionsOfUser(trx, u.userId, u.session!.id, deps.now());
        await audit(trx, u, { orgId: u.orgId, siteId: null, action: 'user.password_change', targetType: 'user', targetId: u.userId, summary: { sessions_ended: n } });
        return n;
      });
      return { changed: true, other_sessions_ended: ended };
    },
  });
  return table;
}
