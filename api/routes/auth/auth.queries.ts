import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';

type Db = Kysely<Database> | Transaction<Database>;

export async function findOrg(db: Db, orgId: string): Promise<{ id: string; name: string; plan: string; trial_ends_at: Date | null } | undefined> {
  return db.selectFrom('orgs').select(['id', 'name', 'plan', 'trial_ends_at']).where('id', '=', orgId).executeTakeFirst();
}

export async function hasMembership(db: Db, userId: string, orgId: string): Promise<boolean> {
  return (await db.selectFrom('memberships').select('id').where('user_id', '=', userId).where('org_id', '=', orgId).executeTakeFirst()) !== undefined;
}

/** A pending invitation by its token hash, locked for the accepting transaction. */
export async function findPendingInvitation(trx: Transaction<Database>, tokenHash: string, now: Date) {
  return trx
    .selectFrom('invitations')
    .select(['id', 'org_id', 'email', 'role'])
    .where('token_hash', '=', tokenHash)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .forUpdate()
    .executeTakeFirst();
}

export async function markInvitationAccepted(trx: Transaction<Database>, id: string, now: Date): Promise<void> {
  await trx.updateTable('invitations').set({ accepted_at: now }).where('id', '=', id).execute();
}
