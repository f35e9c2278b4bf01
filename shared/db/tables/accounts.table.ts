import type { Generated } from 'kysely';
import type { Timestamp, GeneratedTimestamp } from './columns.ts';

// The management plane (migrations 0003-0005): users, logins, memberships, invitations, signup and reset tokens.

export interface UserTable {
  id: string;
  /** Stored lowercased. */
  email: string;
  /** `scrypt$N$r$p$salt$hash` (shared/auth/passwords.ts). */
  password_hash: string;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
  /** When the address was proven (a mailed link followed); null: unverified (no SMTP, or made before 0010). */
  email_verified_at: Generated<Date | null>;
}

/** A login: user tokens name it (`sid`); ended by logout, password change or its expiry. */
export interface UserSessionTable {
  id: string;
  user_id: string;
  created_at: GeneratedTimestamp;
  expires_at: Date;
  revoked_at: Generated<Date | null>;
}

/** A signup waiting for its address to be proven: nothing is bound to the address until the link is followed. */
export interface EmailVerificationTable {
  id: string;
  email: string;
  /** sha256 of the mailed token. */
  token_hash: string;
  password_hash: string;
  org_name: string;
  plan: string;
  created_at: GeneratedTimestamp;
  expires_at: Date;
  used_at: Generated<Date | null>;
}

/** A password reset: single use (used_at), short-lived, the token stored only as its sha256. */
export interface PasswordResetTable {
  id: string;
  user_id: string;
  token_hash: string;
  created_at: GeneratedTimestamp;
  expires_at: Date;
  used_at: Generated<Date | null>;
}

export interface MembershipTable {
  id: string;
  org_id: string;
  user_id: string;
  /** owner | admin | member | viewer */
  role: string;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
}

export interface InvitationTable {
  id: string;
  org_id: string;
  email: string;
  /** admin | member | viewer: owner is never granted by invite. */
  role: string;
  token_hash: string;
  invited_by: string | null;
  created_at: GeneratedTimestamp;
  expires_at: Timestamp;
  accepted_at: Timestamp | null;
  revoked_at: Timestamp | null;
}
