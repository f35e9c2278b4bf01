import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import { insertMembership, insertUser } from '../db/queries/accounts.queries.ts';
import { ConflictError } from '../errors.ts';
import { newId } from '../ids.ts';
import { trialEndsAt, type Plan } from './plans.ts';
import { insertOrg } from './provision.ts';

type Db = Kysely<Database> | Transaction<Database>;

export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];
/** Roles an invitation may grant: `owner` is only ever given by an owner changing a member's role. */
export const INVITABLE_ROLES = ['admin', 'member', 'viewer'] as const;

/** Emails compare case-insensitively: stored and looked up lowercased. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/** A new org owned by `userId` (signup, once its user exists), starting its one 3-day trial now. */
export async function createOrgForUser(
  db: Db,
  a: { userId: string; orgName: string; plan?: Plan; now?: Date },
): Promise<{ orgId: string; membershipId: string; trialEndsAt: Date }> {
  const ends = trialEndsAt(a.now ?? new Date());
  const orgId = await insertOrg(db, { name: a.orgName, plan: a.plan ?? 'grow', trialEndsAt: ends });
  const membershipId = newId();
  await insertMembership(db, { id: membershipId, orgId, userId: a.userId, role: 'owner' });
  return { orgId, membershipId, trialEndsAt: ends };
}

/** Adds an existing user to an org with `role`; false when they already belong to it. */
export function addMember(db: Db, m: { orgId: string; userId: string; role: Role }): Promise<boolean> {
  return insertMembership(db, { id: newId(), orgId: m.orgId, userId: m.userId, role: m.role });
}

/**
 * A new user who is a member of `orgId` with `role` (bootstrap's demo owner, tests). Throws ConflictError
 * when the email is taken.
 */
export async function createMember(
  db: Db,
  m: { orgId: string; email: string; passwordHash: string; role: Role },
): Promise<string> {
  const userId = newId();
  if (!(await insertUser(db, { id: userId, email: normalizeEmail(m.email), passwordHash: m.passwordHash }))) {
    throw new ConflictError('an account with this email already exists');
  }
  await insertMembership(db, { id: newId(), orgId: m.orgId, userId, role: m.role });
  return userId;
}
