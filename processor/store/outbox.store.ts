import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';

type Db = Kysely<Database> | Transaction<Database>;

export interface OutboxMessage {
  /** Webhook event kind, e.g. `issue.created`. */
  kind: string;
  /** Stable id of this notification: the stream drops a second publish of it. */
  msgId: string;
  payload: Record<string, unknown>;
}

/** Queues notifications in the caller's transaction: they exist exactly when the change they describe exists. */
export async function enqueueOutbox(db: Db, messages: readonly OutboxMessage[]): Promise<void> {
  if (messages.length === 0) return;
  // Column arrays: a fixed parameter count however many notifications one batch raises.
  await sql`
    insert into outbox (subject_kind, msg_id, payload)
    select * from unnest(${messages.map((m) => m.kind)}::text[], ${messages.map((m) => m.msgId)}::text[], ${messages.map((m) => JSON.stringify(m.payload))}::jsonb[])`.execute(db);
}

/**
 * Publishes up to `limit` queued notifications in order and marks them published, in one transaction that
 * locks them (`skip locked`), so concurrent relays of several processors never publish the same row at once.
 * Returns how many were published; a publish failure stops the round (the rest stay queued).
 */
export async function relayOutbox(
  db: Kysely<Database>,
  publish: (kind: string, msgId: string, payload: Record<string, unknown>) => Promise<void>,
  limit = 500,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ id: number; subject_kind: string; msg_id: string; payload: Record<string, unknown> }>`
      select id, subject_kind, msg_id, payload from outbox where published_at is null order by id limit ${limit} for update skip locked`.execute(trx);
    const done: number[] = [];
    for (const r of rows) {
      try {
        await publish(r.subject_kind, r.msg_id, typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload);
        done.push(r.id);
      } catch {
        break;
      }
    }
    if (done.length > 0) await sql`update outbox set published_at = now() where id = any(${done}::bigint[])`.execute(trx);
    return done.length;
  });
}

/** Deletes published notifications older than `days` (the stream and the delivery log keep them). */
export async function pruneOutbox(db: Db, days: number): Promise<void> {
  await sql`delete from outbox where published_at is not null and published_at < now() - make_interval(days => ${days})`.execute(db);
}
