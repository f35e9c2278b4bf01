import { EmailSchema } from '../../http/common.schema.ts';
import { z } from 'zod';
import { SELF_SERVE_PLANS } from '../../../shared/tenancy/plans.ts';
import { Uuid } from '../../../shared/contracts/uuid.ts';
/** 8 to 256 characters: long passphrases welcome, megabyte "passwords" (scrypt input) refused. */
export const PasswordSchema = z.string().min(8).max(256);

/**
 * `cookie`: the answer also sets the browser session cookies (HttpOnly session token, readable CSRF token; see
 * docs/dashboard.md), which authenticate later requests of this origin without an Authorization header.
 */
export const SessionModeSchema = z
  .enum(['bearer', 'cookie'])
  .optional()
  .describe('cookie: also set the browser session cookies (the dashboard); default bearer');

export const SignupBodySchema = z.strictObject({
  email: EmailSchema,
  password: PasswordSchema,
  org_name: z.string().trim().min(1).max(120),
  /** Self-serve plans only; defaults to grow. Every new org starts its 3-day trial. */
  plan: z.enum(SELF_SERVE_PLANS).optional(),
});
/** Signup without SMTP signs in at once, so it may open a browser session; with SMTP that happens at verify-email. */
export const SignupNowBodySchema = SignupBodySchema.extend({ session: SessionModeSchema });

export const LoginBodySchema = z.strictObject({
  email: EmailSchema,
  password: z.string().min(1).max(256),
  /** The org the token acts in; default: the user's oldest membership. */
  org_id: Uuid().optional(),
  session: SessionModeSchema,
});

export const AcceptInviteBodySchema = z.strictObject({
  token: z.string().min(1).max(200),
  /** A new user's password; an existing user proves who they are with theirs. */
  password: PasswordSchema,
  session: SessionModeSchema,
});

export const VerifyEmailBodySchema = z.strictObject({
  /** The token mailed at signup. */
  token: z.string().min(1).max(200),
  session: SessionModeSchema,
});

/** Signup's answer with SMTP configured: the same for a free and a taken address. */
export const SignupPendingSchema = z.object({ status: z.literal('verification_sent'), email: z.string() });

export const UserSchema = z.object({ id: Uuid(), email: z.string() });
export const OrgSchema = z.object({
  id: Uuid(),
  name: z.string(),
  plan: z.string(),
  trial_ends_at: z.iso.datetime().nullable(),
});
/** `expires_at`: this token's end (renew before it); `session_expires_at`: when renewal stops and a new login is due. */
export const TokenSchema = z.object({
  token: z.string(),
  expires_at: z.iso.datetime(),
  session_expires_at: z.iso.datetime(),
});
export const SessionSchema = z.object({
  user: UserSchema,
  org: OrgSchema,
  role: z.string(),
  token: z.string(),
  expires_at: z.iso.datetime(),
  session_expires_at: z.iso.datetime(),
});
/** Who the caller is: the dashboard's first question after a reload. */
export const WhoAmISchema = z.object({
  user: UserSchema,
  org: OrgSchema,
  role: z.string(),
  session_expires_at: z.iso.datetime(),
  /** The browser session's CSRF token when the session cookie authenticated this request (else null). */
  csrf_token: z.string().nullable(),
});
export const LogoutSchema = z.object({ logged_out: z.boolean() });

export const PasswordChangeBodySchema = z.strictObject({
  current_password: z.string().min(1).max(256),
  new_password: PasswordSchema,
});
export const PasswordChangedSchema = z.object({ changed: z.literal(true), other_sessions_ended: z.number().int() });

export const ForgotPasswordBodySchema = z.strictObject({ email: EmailSchema });
export const ForgotPasswordSchema = z.object({
  status: z
    .enum(['reset_requested', 'operator_reset_required'])
    .describe(
      'reset_requested: if the address has an account, a reset token is on its way by mail; operator_reset_required: this instance has no mail server',
    ),
  message: z.string(),
});
export const ResetPasswordBodySchema = z.strictObject({
  token: z.string().min(1).max(200),
  new_password: PasswordSchema,
});
export const PasswordResetSchema = z.object({
  reset: z.literal(true),
  sessions_ended: z.number().int().describe('every session of the account ends: sign in again'),
});
