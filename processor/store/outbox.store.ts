import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { epochMs, now, nowPlusMs } from '../../shared/db/sql.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** A queued row as the relay reads it. */
export interface PendingOutboxRow {
  id: number;
  kind: string;
  msgId: string;
  payload: Record<string, unknown>;
  aggregate: string | null;
  stream: 'notify' | 'replay';
  /** A replay row's message body, exactly as the dead letter stored it. */
  raw: string | null;
  attempts: number;
  /** Epoch ms; null: due now. */
  nextAttemptAt: number | null;
}

/**
 * Takes or renews the relay lease for `ttlMs` (one short statement). True when `holder` holds it now: only the
 * holder publishes, so several processors never publish rows of one aggregate out of order.
 */
export async function acquireOutboxLease(db: Db, holder: string, ttlMs: number): Promise<boolean> {
  const r = await db
    .insertInto('outbox_lease')
    .values({ name: 'relay', holder, until: nowPlusMs(ttlMs) })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet((eb) => ({ holder: eb.ref('excluded.holder'), until: eb.ref('excluded.until') }))
        .where((eb) =>
          eb.or([eb('outbox_lease.holder', '=', eb.ref('excluded.holder')), eb('outbox_lease.until', '<', now())]),
        ),
    )
    .returning('holder')
    .executeTakeFirst();
  return r?.holder === holder;
}

/**
 * Ends the lease whoever holds it: for a relay that knows no other can be running (the embedded database is one
 * process's), the holder is an earlier life of its own process, killed before it gave the lease up.
 */
export async function clearOutboxLease(db: Db): Promise<void> {
  await db.deleteFrom('outbox_lease').where('name', '=', 'relay').execute();
}

/** Gives the lease up (shutdown), so another relay takes over at once. */
export async function releaseOutboxLease(db: Db, holder: string): Promise<void> {
  await db.deleteFrom('outbox_lease').where('name', '=', 'relay').where('holder', '=', holder).execute();
}

/** The oldest queued rows (not published, not given up), in id order, due or not: the relay decides. */
export async function loadPendingOutbox(db: Db, limit: number): Promise<PendingOutboxRow[]> {
  const rows = await db
    .selectFrom('outbox')
    .select((eb) => [
      'id',
      'subject_kind',
      'msg_id',
      'payload',
      // A replay row's payload is the dead letter's body as a JSON string: its text, exactly as stored.
      eb.case().when('stream', '=', 'replay').then(sql<string>`payload #>> '{}'`).end().as('raw'),
      'aggregate',
      'stream',
      'attempts',
      epochMs<null>(eb.ref('next_attempt_at')).as('next_ms'),
    ])
    .where('published_at', 'is', null)
    .where('failed_at', 'is', null)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    kind: r.subject_kind,
    msgId: r.msg_id,
    aggregate: r.aggregate,
    stream: r.stream,
    attempts: r.attempts,
    nextAttemptAt: r.next_ms,
    // A driver may hand jsonb back as its text.
    payload: (typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload) as Record<string, unknown>,
    raw: r.raw,
  }));
}

export async function markOutboxPublished(db: Db, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('outbox')
    .set({ published_at: now(), last_error: null })
    .where('id', 'in', [...ids])
    .execute();
}

/** Records a failed publish: the next attempt time, the error, and (`counts`) one more attempt; `give up` ends it. */
export async function markOutboxFailed(
  db: Db,
  id: number,
  o: { error: string; retryInMs: number; counts: boolean; giveUp: boolean },
): Promise<void> {
  await db
    .updateTable('outbox')
    .set((eb) => ({
      attempts: eb('attempts', '+', o.counts ? 1 : 0),
      last_error: o.error.slice(0, 1000),
      next_attempt_at: nowPlusMs(o.retryInMs),
      failed_at: o.giveUp ? now() : null,
    }))
    .where('id', '=', id)
    .execute();
}

/** Deletes published notifications older than `days` (the stream and the delivery log keep them). */
export async function pruneOutbox(db: Db, days: number): Promise<void> {
  await db
    .deleteFrom('outbox')
    .where((eb) => eb(eb.fn.coalesce('published_at', 'failed_at'), '<', nowPlusMs(-days * 86_400_000)))
    .execute();
}
