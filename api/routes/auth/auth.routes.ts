import { renewToken, startSession, type IssuedToken, type SessionPolicy } from '../../../shared/auth/sessions.ts';
import { endSession, endSessionsOfUser } from '../../../shared/db/queries/sessions.queries.ts';
import { decoyHash, hashPassword, verifyPassword } from '../../../shared/auth/passwords.ts';
import type { Transaction } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import {
  claimUnverifiedUser,
  findUserByEmail,
  findUserById,
  firstMembershipOrg,
  insertUser,
  markEmailVerified,
  updatePasswordHash,
} from '../../../shared/db/queries/accounts.queries.ts';
import { alreadyRegisteredMail, passwordResetMail, verificationMail } from '../../../shared/mail/account-mail.ts';
import { issuePasswordReset, redeemPasswordReset } from '../../../shared/auth/password-reset.ts';
import type { Mailer, MailMessage } from '../../../shared/mail/mailer.ts';
import type { Plan } from '../../../shared/tenancy/plans.ts';
import { UnauthorizedError, NotFoundError, ConflictError, UnavailableError } from '../../../shared/errors.ts';
import { hashApiKey, newId, randomToken } from '../../../shared/ids.ts';
import { addMember, createOrgForUser, type Role } from '../../../shared/tenancy/accounts.ts';
import type { UserPrincipal } from '../../http/auth.ts';
import type { SurfaceLimits } from '../../http/rate-limit.ts';
import type { Infer, RouteSpec, RouteTable } from '../../http/routes.ts';
import { audit } from '../../http/audit.ts';
import type { ManageDeps } from '../../http/deps.ts';
import {
  findPendingVerification,
  hasMembership,
  membershipOrgIds,
  insertEmailVerification,
  markInvitationAccepted,
  markVerificationUsed,
} from './auth.queries.ts';
import { findPendingInvitation } from '../../../shared/db/queries/invitations.queries.ts';
import { findOrg } from '../../../shared/db/queries/accounts.queries.ts';
import {
  AcceptInviteBodySchema,
  ForgotPasswordBodySchema,
  ForgotPasswordSchema,
  LoginBodySchema,
  LogoutSchema,
  PasswordChangeBodySchema,
  PasswordChangedSchema,
  PasswordResetSchema,
  ResetPasswordBodySchema,
  SessionSchema,
  SignupBodySchema,
  SignupPendingSchema,
  SignupNowBodySchema,
  TokenSchema,
  VerifyEmailBodySchema,
  WhoAmISchema,
} from './auth.schema.ts';
import { ALL_ROLES, type AccessRule, type AuthState } from '../../http/auth.ts';
import { clearSessionCookie, cookiesSecure, csrfTokenFor, setSessionCookie } from '../../http/browser-session.ts';
import type Koa from 'koa';
import type { z } from 'zod';

/** The caller's own session: user tokens of any role; keys have no session. */
const OWN_SESSION: AccessRule = { surface: 'manage', scopes: [], roles: ALL_ROLES };
/** The caller of an OWN_SESSION route: a user signed in with a token, so with its session. */
type SessionUser = UserPrincipal & { session: NonNullable<UserPrincipal['session']> };

/** Who a new session is for: the account, the organization it acts in, and its role there. */
interface SignedIn {
  user: { id: string; email: string };
  org: { id: string; name: string; plan: string; trialEndsAt: Date | null };
  role: string;
}

/** A signup confirmation is redeemable for a day. */
const VERIFICATION_TTL_MS = 24 * 3600 * 1000;

/** Mail the request depends on: an SMTP failure is a 503 (retry), never a silent success. */
async function sendOrUnavailable(mailer: Mailer, m: MailMessage): Promise<void> {
  try {
    await mailer.send(m);
  } catch (err) {
    throw new UnavailableError('the mail server did not accept the message; retry shortly', 30, err);
  }
}

const presentToken = (t: IssuedToken) => ({
  token: t.token,
  expires_at: t.expiresAt.toISOString(),
  session_expires_at: t.sessionExpiresAt.toISOString(),
});

/** Signup, email verification, login and accepted invitations (the only routes without a credential); renewal, logout and password change. */
export function authRoutes(table: RouteTable, deps: ManageDeps, limits: SurfaceLimits): RouteTable {
  const byIp = [limits.byIp()];
  let decoy: Promise<string> | undefined;
  const policy: SessionPolicy = { tokenTtlSec: deps.jwtTtlSec, sessionMaxSec: deps.sessionMaxSec };
  const secure = (ctx: Koa.Context) => cookiesSecure(ctx, deps.publicBaseUrl);
  /** A new session (login, signup, accepted invitation) and its first token; `cookie` also sets the browser session cookie. */
  const token = async (ctx: Koa.Context, mode: 'bearer' | 'cookie' | undefined, userId: string, orgId: string) => {
    const t = await startSession(deps.db, deps.instanceKeys, { userId, orgId }, policy, deps.now());
    if (mode === 'cookie') setSessionCookie(ctx, t, secure(ctx));
    return presentToken(t);
  };
  const actor = (userId: string, email: string, orgId: string, role: Role): UserPrincipal => ({
    kind: 'user',
    userId,
    email,
    orgId,
    role,
    siteIds: new Set(),
    label: email,
  });

  /** Signup's org and its audit entry, for a user who exists (verified signup) or is created with it. */
  const openOrg = async (
    trx: Transaction<Database>,
    a: { userId: string; email: string; orgName: string; plan: Plan | undefined; now: Date },
  ) => {
    const c = await createOrgForUser(trx, { userId: a.userId, orgName: a.orgName, plan: a.plan, now: a.now });
    await audit(trx, actor(a.userId, a.email, c.orgId, 'owner'), {
      orgId: c.orgId,
      siteId: null,
      action: 'org.create',
      targetType: 'org',
      targetId: c.orgId,
      summary: { name: a.orgName, plan: a.plan ?? 'grow', owner: a.email, trial_ends_at: c.trialEndsAt.toISOString() },
    });
    return c;
  };
  const presentOrg = (org: SignedIn['org']) => ({
    id: org.id,
    name: org.name,
    plan: org.plan,
    trial_ends_at: org.trialEndsAt?.toISOString() ?? null,
  });

  /** Every public auth route: a POST, limited per client IP since it has no credential to limit by. */
  const addPublicPost = <B extends z.ZodType>(
    spec: Omit<RouteSpec<undefined, undefined, B>, 'method' | 'tag' | 'access'>,
  ) => table.addPublic<undefined, undefined, B>({ method: 'post', tag: 'auth', ...spec }, byIp);

  /**
   * A public route that ends signed in (signup without SMTP, verify-email, accept-invite): 201 with the new session,
   * started in the mode the body asks for. `signIn` does the route's own work and says who signed in to what.
   */
  const addSignIn = <B extends z.ZodType<{ session?: 'bearer' | 'cookie' }>>({
    signIn,
    ...spec
  }: Pick<RouteSpec<undefined, undefined, B>, 'path' | 'summary' | 'description' | 'body'> & {
    signIn(body: z.infer<B>, ctx: Koa.Context): Promise<SignedIn>;
  }) =>
    addPublicPost({
      ...spec,
      status: 201,
      response: SessionSchema,
      async handler(ctx, input) {
        const body = input.body as z.infer<B>;
        const { user, org, role } = await signIn(body, ctx);
        return {
          user: { id: user.id, email: user.email },
          org: presentOrg(org),
          role,
          ...(await token(ctx, body.session, user.id, org.id)),
        };
      },
    });

  /**
   * A route of the caller's own session (OWN_SESSION): its tenancy is the caller's own organization, and the caller
   * a user with a session, since keys have none.
   */
  const addOwnSession = <B extends z.ZodType | undefined = undefined>(
    spec: Omit<RouteSpec<undefined, undefined, B>, 'access' | 'handler'> & {
      handler(ctx: Koa.Context, input: { user: SessionUser; body: Infer<B> }): Promise<unknown>;
    },
  ) =>
    table.add<undefined, undefined, B>({
      ...spec,
      access: OWN_SESSION,
      handler(ctx, { principal, guard, body }) {
        guard.org(principal.orgId, 'organization not found');
        return spec.handler(ctx, { user: principal as SessionUser, body });
      },
    });

  if (deps.mailer) {
    const mailer = deps.mailer;
    addPublicPost({
      path: '/v1/auth/signup',
      status: 202,
      summary: 'Start an account and its organization: a confirmation token is mailed to the address',
      description:
        'With SMTP configured nothing is bound to the address until it is proven: the answer is 202 and identical whether the address is free or taken ' +
        '(a taken address is mailed a notice instead of a token), so signup reveals no accounts. POST the mailed token to /v1/auth/verify-email within 24 hours.',
      body: SignupBodySchema,
      response: SignupPendingSchema,
      async handler(_ctx, { body }) {
        // Hashed whatever the address: a taken address costs the same time as a free one.
        const passwordHash = await hashPassword(body.password, deps.passwordCost);
        const existing = await findUserByEmail(deps.db, body.email);
        if (await limits.mayMail(body.email)) {
          if (existing?.emailVerifiedAt) {
            await sendOrUnavailable(mailer, alreadyRegisteredMail(body.email, deps.publicBaseUrl));
          } else {
            const t = `evt_${randomToken(32)}`;
            await insertEmailVerification(deps.db, {
              id: newId(),
              email: body.email,
              tokenHash: hashApiKey(t),
              passwordHash,
              orgName: body.org_name,
              plan: body.plan ?? 'grow',
              expiresAt: new Date(deps.now().getTime() + VERIFICATION_TTL_MS),
            });
            await sendOrUnavailable(mailer, verificationMail(body.email, t, deps.publicBaseUrl, existing !== null));
          }
        }
        return { status: 'verification_sent' as const, email: body.email };
      },
    });
  } else {
    addSignIn({
      path: '/v1/auth/signup',
      summary: 'Create an account and its organization (you are its owner; the org starts its 3-day trial)',
      description:
        'Without SMTP the address is not verified (docs/security.md): the account exists at once, and a taken address answers 409.',
      body: SignupNowBodySchema,
      async signIn(body) {
        const passwordHash = await hashPassword(body.password, deps.passwordCost);
        const now = deps.now();
        const created = await deps.db.transaction().execute(async (trx) => {
          const userId = newId();
          if (!(await insertUser(trx, { id: userId, email: body.email, passwordHash })))
            throw new ConflictError('an account with this email already exists');
          return {
            userId,
            ...(await openOrg(trx, { userId, email: body.email, orgName: body.org_name, plan: body.plan, now })),
          };
        });
        return {
          user: { id: created.userId, email: body.email },
          org: { id: created.orgId, name: body.org_name, plan: body.plan ?? 'grow', trialEndsAt: created.trialEndsAt },
          role: 'owner',
        };
      },
    });
  }

  addSignIn({
    path: '/v1/auth/verify-email',
    summary: 'Prove an address with its mailed token: the account and its organization are created, signed in',
    description:
      'The token from the signup mail, once, within 24 hours. An address already held by an unverified account (made before SMTP was configured, ' +
      'or by someone who never proved it) is taken over by its proven owner: their password replaces the old one, every old session ends, and ' +
      'the old memberships are dropped. An address with a verified account answers 409.',
    body: VerifyEmailBodySchema,
    async signIn(body) {
      const now = deps.now();
      const done = await deps.db.transaction().execute(async (trx) => {
        const v = await findPendingVerification(trx, hashApiKey(body.token), now);
        if (!v) throw new NotFoundError('confirmation token not found, expired or already used');
        await markVerificationUsed(trx, v.id, now);
        const existing = await findUserByEmail(trx, v.email);
        if (existing?.emailVerifiedAt)
          throw new ConflictError('this address already has an account: sign in with POST /v1/auth/login');
        let userId: string;
        if (existing) {
          await claimUnverifiedUser(trx, existing.id, v.password_hash, now);
          userId = existing.id;
        } else {
          userId = newId();
          if (
            !(await insertUser(trx, {
              id: userId,
              email: v.email,
              passwordHash: v.password_hash,
              emailVerifiedAt: now,
            }))
          )
            throw new ConflictError('an account with this email was just created; sign in');
        }
        const org = await openOrg(trx, { userId, email: v.email, orgName: v.org_name, plan: v.plan as Plan, now });
        return { userId, email: v.email, orgName: v.org_name, plan: v.plan, ...org };
      });
      return {
        user: { id: done.userId, email: done.email },
        org: { id: done.orgId, name: done.orgName, plan: done.plan, trialEndsAt: done.trialEndsAt },
        role: 'owner',
      };
    },
  });

  addPublicPost({
    path: '/v1/auth/login',
    summary: 'Exchange email and password for a user token',
    description:
      'The token acts in one organization: `org_id`, or the oldest membership. Wrong email, wrong password and a foreign org_id all answer the same 401.',
    body: LoginBodySchema,
    response: TokenSchema,
    async handler(ctx, { body }) {
      await limits.loginAttempt(ctx, body.email);
      const user = await findUserByEmail(deps.db, body.email);
      // NOTE: an unknown email still costs one scrypt verification, so timing does not reveal accounts.
      const valid = await verifyPassword(
        body.password,
        user?.passwordHash ?? (await (decoy ??= decoyHash(deps.passwordCost))),
      );
      // An unknown address has no organization to audit in (the audit log is per org): it is refused unrecorded.
      if (!user) throw new UnauthorizedError('invalid email or password');
      const orgId = body.org_id ?? (await firstMembershipOrg(deps.db, user.id));
      const member = valid && orgId !== null && (await hasMembership(deps.db, user.id, orgId));
      if (!valid || !member) {
        // Each org the account belongs to sees attempts on it: who (address), from where, why. Never the password.
        const reason = valid ? 'not a member of the organization asked for' : 'wrong password';
        for (const org of await membershipOrgIds(deps.db, user.id)) {
          await audit(deps.db, actor(user.id, user.email, org, 'member'), {
            orgId: org,
            siteId: null,
            action: 'auth.login_failed',
            targetType: 'user',
            targetId: user.id,
            summary: { ip: ctx.ip, reason },
          });
        }
        throw new UnauthorizedError('invalid email or password');
      }
      const issued = await token(ctx, body.session, user.id, orgId!);
      await audit(deps.db, actor(user.id, user.email, orgId!, 'member'), {
        orgId: orgId!,
        siteId: null,
        action: 'auth.login',
        targetType: 'user',
        targetId: user.id,
        summary: { ip: ctx.ip },
      });
      return issued;
    },
  });

  addSignIn({
    path: '/v1/auth/accept-invite',
    summary: 'Join an organization with an invitation token',
    description:
      'Creates the account when the invited email has none (the password becomes its password); an existing account must give its current password. ' +
      'With SMTP configured the token was mailed to the address, so redeeming it proves the address: a new account is verified, and an unverified ' +
      'account holding the address is taken over (its password replaced, its sessions ended, its other memberships dropped). Answers a token for the inviting organization.',
    body: AcceptInviteBodySchema,
    async signIn(body, ctx) {
      const now = deps.now();
      const newHash = await hashPassword(body.password, deps.passwordCost);
      // The token reached the invitee by mail only when SMTP is configured; otherwise whoever created it handed it on.
      const proves = deps.mailer !== null;
      const joined = await deps.db.transaction().execute(async (trx) => {
        const invite = await findPendingInvitation(trx, { tokenHash: hashApiKey(body.token) }, now);
        if (!invite) throw new NotFoundError('invitation not found, expired or already used');
        let user = await findUserByEmail(trx, invite.email);
        if (user && proves && !user.emailVerifiedAt) {
          await claimUnverifiedUser(trx, user.id, newHash, now);
        } else if (user) {
          // Whoever holds an invitation must not get unlimited guesses at the invited account's password.
          await limits.loginAttempt(ctx, user.email);
          if (!(await verifyPassword(body.password, user.passwordHash)))
            throw new UnauthorizedError('this email has an account: give its password');
          if (proves) await markEmailVerified(trx, user.id, now);
        } else {
          const id = newId();
          if (
            !(await insertUser(trx, {
              id,
              email: invite.email,
              passwordHash: newHash,
              emailVerifiedAt: proves ? now : null,
            }))
          ) {
            throw new ConflictError('an account with this email was just created; retry');
          }
          user = { id, email: invite.email, passwordHash: newHash, emailVerifiedAt: proves ? now : null };
        }
        if (!(await addMember(trx, { orgId: invite.org_id, userId: user.id, role: invite.role as Role })))
          throw new ConflictError('already a member of this organization');
        await markInvitationAccepted(trx, invite.id, now);
        await audit(trx, actor(user.id, user.email, invite.org_id, invite.role as Role), {
          orgId: invite.org_id,
          siteId: null,
          action: 'member.join',
          targetType: 'user',
          targetId: user.id,
          summary: { email: user.email, role: invite.role, invitation_id: invite.id, email_verified: proves },
        });
        return { user, orgId: invite.org_id, role: invite.role };
      });
      const org = await findOrg(deps.db, joined.orgId);
      return {
        user: joined.user,
        org: {
          id: joined.orgId,
          name: org?.name ?? '',
          plan: org?.plan ?? 'grow',
          trialEndsAt: org?.trial_ends_at ?? null,
        },
        role: joined.role,
      };
    },
  });

  const mailer = deps.mailer;
  addPublicPost({
    path: '/v1/auth/forgot-password',
    status: 202,
    summary:
      'Ask for a password reset: a single-use token, valid 30 minutes, is mailed to the address if it has an account',
    description:
      'The answer is the same 202, at once, whether the address has an account or not: the lookup and the mail happen after it, so neither ' +
      'status nor timing reveals accounts. At most 5 account mails per address per hour, and the per-address sign-in limits apply. ' +
      'Without SMTP the answer says so (operator_reset_required): the operator runs `friction users reset-password EMAIL`.',
    body: ForgotPasswordBodySchema,
    response: ForgotPasswordSchema,
    async handler(_ctx, { body }) {
      if (!mailer) {
        return {
          status: 'operator_reset_required' as const,
          message:
            'this instance has no mail server (SMTP_URL): ask its operator to run `friction users reset-password <email>`',
        };
      }
      // After the answer: a known address (lookup, insert, SMTP) must not take longer to answer than an unknown one.
      setImmediate(() => {
        void (async () => {
          if (!(await limits.mayMail(body.email))) return;
          const user = await findUserByEmail(deps.db, body.email);
          if (!user) return;
          const { token: reset } = await issuePasswordReset(deps.db, user.id, deps.now());
          await mailer.send(passwordResetMail(user.email, reset, deps.publicBaseUrl));
        })().catch((err: unknown) => deps.log.error({ err }, 'password reset mail failed'));
      });
      return {
        status: 'reset_requested' as const,
        message: 'if this address has an account, a reset token is on its way (valid 30 minutes)',
      };
    },
  });

  addPublicPost({
    path: '/v1/auth/reset-password',
    summary: 'Set a new password with a reset token; every session of the account ends',
    description:
      'The token from the reset mail (or from `friction users reset-password`), once, within 30 minutes. Sign in afterwards.',
    body: ResetPasswordBodySchema,
    response: PasswordResetSchema,
    async handler(ctx, { body }) {
      const newHash = await hashPassword(body.new_password, deps.passwordCost);
      const now = deps.now();
      const ended = await deps.db.transaction().execute(async (trx) => {
        const userId = await redeemPasswordReset(trx, body.token, now);
        if (!userId) throw new NotFoundError('reset token not found, expired or already used');
        const user = await findUserById(trx, userId);
        await updatePasswordHash(trx, userId, newHash);
        const n = await endSessionsOfUser(trx, userId, null, now);
        for (const org of await membershipOrgIds(trx, userId)) {
          await audit(trx, actor(userId, user?.email ?? '', org, 'member'), {
            orgId: org,
            siteId: null,
            action: 'user.password_reset',
            targetType: 'user',
            targetId: userId,
            summary: { sessions_ended: n, ip: ctx.ip },
          });
        }
        return n;
      });
      return { reset: true as const, sessions_ended: ended };
    },
  });

  addOwnSession({
    method: 'post',
    path: '/v1/auth/refresh',
    tag: 'auth',
    summary: 'Renew a user token before it expires',
    description:
      'Answers a fresh token of the same session (same user and organization). Renewal works while the session lives: until logout, a password change, or SESSION_MAX_SECONDS after login.',
    response: TokenSchema,
    async handler(ctx, { user }) {
      const t = await renewToken(
        deps.instanceKeys,
        {
          userId: user.userId,
          orgId: user.orgId,
          sessionId: user.session.id,
          sessionExpiresAt: user.session.expiresAt,
        },
        policy,
        deps.now(),
      );
      if ((ctx.state as AuthState).viaCookie) setSessionCookie(ctx, t, secure(ctx));
      return presentToken(t);
    },
  });

  addOwnSession({
    method: 'get',
    path: '/v1/auth/session',
    tag: 'auth',
    summary: "Who you are: your user, organization and role, and the session's end",
    description:
      'With the browser session cookie (docs/dashboard.md) the answer also carries `csrf_token`, which every unsafe request that the cookie authenticates must send in X-CSRF-Token.',
    response: WhoAmISchema,
    async handler(ctx, { user }) {
      const org = await findOrg(deps.db, user.orgId);
      if (!org) throw new NotFoundError('organization not found');
      ctx.set('Cache-Control', 'no-store');
      return {
        user: { id: user.userId, email: user.email },
        org: presentOrg({ id: org.id, name: org.name, plan: org.plan, trialEndsAt: org.trial_ends_at }),
        role: user.role,
        session_expires_at: user.session.expiresAt.toISOString(),
        csrf_token: (ctx.state as AuthState).viaCookie
          ? csrfTokenFor(await deps.instanceKeys.jwtKey(), user.session.id)
          : null,
      };
    },
  });

  addOwnSession({
    method: 'post',
    path: '/v1/auth/logout',
    tag: 'auth',
    summary: 'End this session: its tokens are refused from now on',
    description: 'Also clears the browser session cookie.',
    response: LogoutSchema,
    async handler(ctx, { user }) {
      clearSessionCookie(ctx, secure(ctx));
      const loggedOut = await endSession(deps.db, user.session.id, user.userId, deps.now());
      if (loggedOut)
        await audit(deps.db, user, {
          orgId: user.orgId,
          siteId: null,
          action: 'auth.logout',
          targetType: 'user',
          targetId: user.userId,
          summary: { ip: ctx.ip },
        });
      return { logged_out: loggedOut };
    },
  });

  addOwnSession({
    method: 'post',
    path: '/v1/auth/password',
    tag: 'auth',
    summary: 'Change your password; every other session of yours ends',
    description:
      "Needs the current password (counted against the account's sign-in attempts). The calling session stays; every other session (other devices, a leaked token) ends at once.",
    body: PasswordChangeBodySchema,
    response: PasswordChangedSchema,
    async handler(ctx, { user, body }) {
      await limits.loginAttempt(ctx, user.email);
      const account = await findUserById(deps.db, user.userId);
      if (!account || !(await verifyPassword(body.current_password, account.passwordHash)))
        throw new UnauthorizedError('current_password is wrong');
      const newHash = await hashPassword(body.new_password, deps.passwordCost);
      const ended = await deps.db.transaction().execute(async (trx) => {
        await updatePasswordHash(trx, user.userId, newHash);
        const n = await endSessionsOfUser(trx, user.userId, user.session.id, deps.now());
        await audit(trx, user, {
          orgId: user.orgId,
          siteId: null,
          action: 'user.password_change',
          targetType: 'user',
          targetId: user.userId,
          summary: { sessions_ended: n },
        });
        return n;
      });
      return { changed: true, other_sessions_ended: ended };
    },
  });
  return table;
}
