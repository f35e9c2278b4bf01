import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** Every org the user is a member of (where a failed sign-in to the account is audited). */
export async function membershipOrgIds(db: Db, userId: string): Promise<string[]> {
  return (await db.selectFrom('memberships').select('org_id').where('user_id', '=', userId).execute()).map(
    (r) => r.org_id,
  );
}

export async function hasMembership(db: Db, userId: string, orgId: string): Promise<boolean> {
  return (
    (await db
      .selectFrom('memberships')
      .select('id')
      .where('user_id', '=', userId)
      .where('org_id', '=', orgId)
      .executeTakeFirst()) !== undefined
  );
}

export async function markInvitationAccepted(trx: Transaction<Database>, id: string, now: Date): Promise<void> {
  await trx.updateTable('invitations').set({ accepted_at: now }).where('id', '=', id).execute();
}

export async function insertEmailVerification(
  db: Db,
  v: {
    id: string;
    email: string;
    tokenHash: string;
    passwordHash: string;
    orgName: string;
    plan: string;
    expiresAt: Date;
  },
): Promise<void> {
  await db
    .insertInto('email_verifications')
    .values({
      id: v.id,
      email: v.email,
      token_hash: v.tokenHash,
      password_hash: v.passwordHash,
      org_name: v.orgName,
      plan: v.plan,
      expires_at: v.expiresAt,
    })
    .execute();
}

/** An unused, unexpired signup verification by its token hash, locked for the verifying transaction. */
export async function findPendingVerification(trx: Transaction<Database>, tokenHash: string, now: Date) {
  return trx
    .selectFrom('email_verifications')
    .select(['id', 'email', 'password_hash', 'org_name', 'plan'])
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .forUpdate()
    .executeTakeFirst();
}

export async function markVerificationUsed(trx: Transaction<Database>, id: string, now: Date): Promise<void> {
  await trx.updateTable('email_verifications').set({ used_at: now }).where('id', '=', id).execute();
}
