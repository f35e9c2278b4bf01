import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../database.ts';

type Db = Kysely<Database> | Transaction<Database>;

export async function insertSession(db: Db, s: { id: string; userId: string; expiresAt: Date }): Promise<void> {
  await db.insertInto('user_sessions').values({ id: s.id, user_id: s.userId, expires_at: s.expiresAt }).execute();
}

/** Revokes the user's sessions not revoked yet (the caller narrows which). */
const revokeSessionsOf = (db: Db, userId: string, now: Date) =>
  db
    .updateTable('user_sessions')
    .set({ revoked_at: now })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null);

/** Ends one session; true when it was live. */
export async function endSession(db: Db, id: string, userId: string, now: Date): Promise<boolean> {
  const r = await revokeSessionsOf(db, userId, now).where('id', '=', id).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Ends every live session of the user except `keep` (null: all of them); returns how many ended. */
export async function endSessionsOfUser(db: Db, userId: string, keep: string | null, now: Date): Promise<number> {
  let q = revokeSessionsOf(db, userId, now).where('expires_at', '>', now);
  if (keep) q = q.where('id', '!=', keep);
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows);
}
