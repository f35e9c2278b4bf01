import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';

type Db = Kysely<Database> | Transaction<Database>;

export interface MemberRow {
  id: string;
  user_id: string;
  email: string;
  role: string;
  org_id: string;
  created_at: Date;
}

const memberQuery = (db: Db) =>
  db
    .selectFrom('memberships as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.id', 'm.user_id', 'u.email', 'm.role', 'm.org_id', 'm.created_at']);

export async function listMembers(db: Db, orgId: string): Promise<MemberRow[]> {
  return memberQuery(db).where('m.org_id', '=', orgId).orderBy('m.created_at').orderBy('m.id').execute();
}

export async function findMemberForUpdate(trx: Transaction<Database>, id: string): Promise<MemberRow | undefined> {
  return memberQuery(trx).where('m.id', '=', id).forUpdate('m').executeTakeFirst();
}

export async function findMemberByEmail(db: Db, orgId: string, email: string): Promise<MemberRow | undefined> {
  return memberQuery(db).where('m.org_id', '=', orgId).where('u.email', '=', email).executeTakeFirst();
}

/** Revokes the email's pending invitation to the org, if any (a new invitation replaces it). */
export async function revokePendingInvitations(
  trx: Transaction<Database>,
  orgId: string,
  email: string,
  now: Date,
): Promise<void> {
  await trx
    .updateTable('invitations')
    .set({ revoked_at: now })
    .where('org_id', '=', orgId)
    .where('email', '=', email)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .execute();
}

export async function revokeInvitation(trx: Transaction<Database>, id: string, now: Date): Promise<void> {
  await trx.updateTable('invitations').set({ revoked_at: now }).where('id', '=', id).execute();
}

export async function insertInvitation(
  trx: Transaction<Database>,
  i: {
    id: string;
    orgId: string;
    email: string;
    role: string;
    tokenHash: string;
    invitedBy: string | null;
    expiresAt: Date;
  },
) {
  return trx
    .insertInto('invitations')
    .values({
      id: i.id,
      org_id: i.orgId,
      email: i.email,
      role: i.role,
      token_hash: i.tokenHash,
      invited_by: i.invitedBy,
      expires_at: i.expiresAt,
    })
    .returning(['id', 'email', 'role', 'created_at', 'expires_at'])
    .executeTakeFirstOrThrow();
}

export async function setMemberRole(trx: Transaction<Database>, id: string, role: string, now: Date): Promise<void> {
  await trx.updateTable('memberships').set({ role, updated_at: now }).where('id', '=', id).execute();
}

export async function deleteMember(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.deleteFrom('memberships').where('id', '=', id).execute();
}

/**
 * Locks the org's row: invitations of one org are written one at a time, so "a new invitation replaces the
 * pending one" holds when identical invitations race (without it both would insert, and the pending-invitation
 * unique index would refuse one).
 */
export async function lockOrgForInvitations(trx: Transaction<Database>, orgId: string): Promise<void> {
  await trx.selectFrom('orgs').select('id').where('id', '=', orgId).forUpdate().execute();
}
