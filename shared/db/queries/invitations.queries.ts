import type { ExpressionBuilder, Kysely, Transaction } from 'kysely';
import type { Database } from '../database.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** An invitation still open at `now`: neither accepted nor revoked, and not expired. */
const pendingAt = (now: Date) => (eb: ExpressionBuilder<Database, 'invitations'>) =>
  eb.and([eb('accepted_at', 'is', null), eb('revoked_at', 'is', null), eb('expires_at', '>', now)]);

/** The org's pending invitations, oldest first (the members list shows them beside the members). */
export async function listPendingInvitations(db: Db, orgId: string, now: Date) {
  return db
    .selectFrom('invitations')
    .select(['id', 'email', 'role', 'created_at', 'expires_at'])
    .where('org_id', '=', orgId)
    .where(pendingAt(now))
    .orderBy('created_at')
    .execute();
}

/**
 * A pending invitation, locked for the caller's transaction: by its token hash (accepting it) or by its id
 * (revoking it).
 */
export async function findPendingInvitation(
  trx: Transaction<Database>,
  by: { tokenHash: string } | { id: string },
  now: Date,
) {
  return trx
    .selectFrom('invitations')
    .select(['id', 'org_id', 'email', 'role'])
    .where((eb) => ('id' in by ? eb('id', '=', by.id) : eb('token_hash', '=', by.tokenHash)))
    .where(pendingAt(now))
    .forUpdate()
    .executeTakeFirst();
}
