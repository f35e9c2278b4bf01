import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import { hashApiKey, newId, randomToken } from '../ids.ts';

/** A reset token is redeemable for 30 minutes, once. */
export const PASSWORD_RESET_TTL_MS = 30 * 60_000;

/**
 * A new reset token for `userId` (returned once; only its hash is stored). Earlier unused tokens of the user are
 * spent at the same time: only the newest one mailed or printed works.
 */
export async function issuePasswordReset(
  db: Kysely<Database> | Transaction<Database>,
  userId: string,
  now: Date,
): Promise<{ token: string; expiresAt: Date }> {
  const token = `prt_${randomToken(32)}`;
  const expiresAt = new Date(now.getTime() + PASSWORD_RESET_TTL_MS);
  await db
    .updateTable('password_resets')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
  await db
    .insertInto('password_resets')
    .values({ id: newId(), user_id: userId, token_hash: hashApiKey(token), expires_at: expiresAt })
    .execute();
  return { token, expiresAt };
}

/** Spends a reset token: the user it resets, or null when it is unknown, used or expired. Locks the row for `trx`. */
export async function redeemPasswordReset(
  trx: Transaction<Database>,
  token: string,
  now: Date,
): Promise<string | null> {
  const row = await trx
    .selectFrom('password_resets')
    .select(['id', 'user_id'])
    .where('token_hash', '=', hashApiKey(token))
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .forUpdate()
    .executeTakeFirst();
  if (!row) return null;
  await trx.updateTable('password_resets').set({ used_at: now }).where('id', '=', row.id).execute();
  return row.user_id;
}
