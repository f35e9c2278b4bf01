import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../database.ts';
import { endSessionsOfUser } from './sessions.queries.ts';

type Db = Kysely<Database> | Transaction<Database>;

export interface UserRecord {
  id: string;
  email: string;
  passwordHash: string;
  /** When the address was proven; null: unverified. */
  emailVerifiedAt: Date | null;
}

const userColumns = ['id', 'email', 'password_hash', 'email_verified_at'] as const;
const toUser = (row: {
  id: string;
  email: string;
  password_hash: string;
  email_verified_at: Date | null;
}): UserRecord => ({
  id: row.id,
  email: row.email,
  passwordHash: row.password_hash,
  emailVerifiedAt: row.email_verified_at,
});

/** Emails are stored lowercased; callers pass them lowercased. */
export async function findUserByEmail(db: Db, email: string): Promise<UserRecord | null> {
  const row = await db.selectFrom('users').select(userColumns).where('email', '=', email).executeTakeFirst();
  return row ? toUser(row) : null;
}

/** Inserts a user; returns false when the email is taken (unique violation), leaving the transaction usable. */
export async function insertUser(
  db: Db,
  u: { id: string; email: string; passwordHash: string; emailVerifiedAt?: Date | null },
): Promise<boolean> {
  const r = await db
    .insertInto('users')
    .values({ id: u.id, email: u.email, password_hash: u.passwordHash, email_verified_at: u.emailVerifiedAt ?? null })
    .onConflict((oc) => oc.column('email').doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function insertMembership(
  db: Db,
  m: { id: string; orgId: string; userId: string; role: string },
): Promise<boolean> {
  const r = await db
    .insertInto('memberships')
    .values({ id: m.id, org_id: m.orgId, user_id: m.userId, role: m.role })
    .onConflict((oc) => oc.columns(['org_id', 'user_id']).doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) === 1;
}

/** The org a login lands in when none is named: the user's oldest membership. */
export async function firstMembershipOrg(db: Db, userId: string): Promise<string | null> {
  const row = await db
    .selectFrom('memberships')
    .select('org_id')
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .executeTakeFirst();
  return row?.org_id ?? null;
}

export interface MemberContext {
  email: string;
  role: string;
  /** When the token's session ends (renewal stops there). */
  sessionExpiresAt: Date;
  /** The org's live (not deleted) sites. */
  siteIds: string[];
}

/**
 * One round trip per authenticated user request: the user's role in the token's org and that org's sites, when
 * the token's session is live. Null when the membership no longer exists or the session ended (logout, password
 * change, expiry): removed members and ended sessions lose access at once, whatever the token says.
 */
export async function loadMemberContext(
  db: Db,
  userId: string,
  orgId: string,
  sessionId: string,
): Promise<MemberContext | null> {
  // Raw: the member's site ids as array(subquery) in the same round trip; kysely's builder has no array constructor.
  const { rows } = await sql<{ email: string; role: string; site_ids: string[] | null; session_expires_at: Date }>`
    select u.email, m.role, us.expires_at as session_expires_at,
           array(select s.id::text from sites s where s.org_id = m.org_id and s.deleted_at is null) as site_ids
    from memberships m
    join users u on u.id = m.user_id
    join user_sessions us on us.id = ${sessionId} and us.user_id = m.user_id and us.revoked_at is null and us.expires_at > now()
    where m.user_id = ${userId} and m.org_id = ${orgId}`.execute(db);
  const r = rows[0];
  return r
    ? { email: r.email, role: r.role, siteIds: r.site_ids ?? [], sessionExpiresAt: new Date(r.session_expires_at) }
    : null;
}

export async function updatePasswordHash(db: Db, userId: string, passwordHash: string): Promise<void> {
  await db
    .updateTable('users')
    .set({ password_hash: passwordHash, updated_at: new Date() })
    .where('id', '=', userId)
    .execute();
}

export async function findUserById(db: Db, userId: string): Promise<UserRecord | null> {
  const row = await db.selectFrom('users').select(userColumns).where('id', '=', userId).executeTakeFirst();
  return row ? toUser(row) : null;
}

/** Marks the user's address proven. */
export async function markEmailVerified(db: Db, userId: string, now: Date): Promise<void> {
  await db
    .updateTable('users')
    .set({ email_verified_at: now, updated_at: now })
    .where('id', '=', userId)
    .where('email_verified_at', 'is', null)
    .execute();
}

/**
 * The address's proven owner takes over an account someone created for it without proof (an invitation redeemed
 * by the inviter, before SMTP was configured): their password replaces the squatter's, every session ends, and
 * the memberships the squatter gathered under that address are dropped.
 */
export async function claimUnverifiedUser(db: Db, userId: string, passwordHash: string, now: Date): Promise<void> {
  await db
    .updateTable('users')
    .set({ password_hash: passwordHash, email_verified_at: now, updated_at: now })
    .where('id', '=', userId)
    .execute();
  await db.deleteFrom('memberships').where('user_id', '=', userId).execute();
  await endSessionsOfUser(db, userId, null, now);
}

export async function findOrg(
  db: Db,
  orgId: string,
): Promise<{ id: string; name: string; plan: string; trial_ends_at: Date | null } | undefined> {
  return db
    .selectFrom('orgs')
    .select(['id', 'name', 'plan', 'trial_ends_at'])
    .where('id', '=', orgId)
    .executeTakeFirst();
}
