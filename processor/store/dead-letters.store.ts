import { sql, type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { BusMessage } from '../../shared/bus/bus.ts';
import { toStorableText } from '../../shared/text.ts';
import { enqueueOutbox } from '../../shared/notify/outbox.ts';

/**
 * Records a message the processor gave up on, with its payload, so an operator can inspect it and replay it
 * (`friction dead-letters list|replay`). Text the database cannot hold is replaced (U+FFFD): the row that makes
 * termination safe must never fail on its content.
 */
export async function insertDeadLetter(
  db: Kysely<Database>,
  stream: string,
  msg: BusMessage,
  reason: string,
): Promise<void> {
  await db
    .insertInto('dead_letters')
    .values({
      stream,
      subject: msg.subject,
      stream_seq: msg.seq,
      reason: toStorableText(reason.slice(0, 2000)),
      payload: toStorableText(new TextDecoder().decode(msg.data).slice(0, 1_000_000)),
    })
    .execute();
}

/** A dead letter as `friction dead-letters list` shows it (the payload's size, not the payload). */
export interface DeadLetterListing {
  id: number;
  stream: string;
  subject: string;
  streamSeq: number;
  reason: string;
  bytes: number;
  createdAt: Date;
  replayedAt: Date | null;
  replayedBy: string | null;
}

/** The newest dead letters first (only `ids` when given); replayed ones only when `withReplayed`. */
export async function listDeadLetters(
  db: Kysely<Database>,
  o: { limit: number; withReplayed: boolean; ids?: readonly number[] },
): Promise<DeadLetterListing[]> {
  let q = db
    .selectFrom('dead_letters')
    .select([
      'id',
      'stream',
      'subject',
      'stream_seq',
      'reason',
      'created_at',
      'replayed_at',
      'replayed_by',
      sql<number>`octet_length(payload)`.as('bytes'),
    ]);
  if (!o.withReplayed) q = q.where('replayed_at', 'is', null);
  if (o.ids) q = q.where('id', 'in', o.ids.length > 0 ? [...o.ids] : [-1]);
  const rows = await q.orderBy('id', 'desc').limit(o.limit).execute();
  return rows.map((r) => ({
    id: Number(r.id),
    stream: r.stream,
    subject: r.subject,
    streamSeq: Number(r.stream_seq),
    reason: r.reason,
    bytes: Number(r.bytes),
    createdAt: new Date(r.created_at as unknown as string),
    replayedAt: r.replayed_at ? new Date(r.replayed_at as unknown as string) : null,
    replayedBy: r.replayed_by,
  }));
}

/**
 * Puts dead letters back on their subjects: in one transaction, marks each not yet replayed (`ids`, or every one
 * when `ids` is undefined) as replayed by `actor` and queues it in the outbox, which the processor's relay publishes
 * after the commit. A dead letter is replayed once however often this runs (the mark is the audit record); the
 * consumers are idempotent, so a message that was partly stored before it was dead-lettered is not stored twice.
 * Returns the ids replayed now.
 */
export async function replayDeadLetters(
  db: Kysely<Database>,
  ids: readonly number[] | undefined,
  actor: string,
): Promise<number[]> {
  return db.transaction().execute(async (trx) => {
    let q = trx
      .updateTable('dead_letters')
      .set({ replayed_at: sql`now()`, replayed_by: actor })
      .where('replayed_at', 'is', null);
    if (ids !== undefined) q = q.where('id', 'in', ids.length > 0 ? [...ids] : [-1]);
    const rows = (await q.returning(['id', 'subject', 'payload']).execute()).sort(
      (a, b) => Number(a.id) - Number(b.id),
    );
    await enqueueOutbox(
      trx,
      rows.map((r) => ({
        kind: r.subject,
        msgId: `replay:dead-letter:${r.id}`,
        payload: r.payload,
        stream: 'replay' as const,
      })),
    );
    return rows.map((r) => Number(r.id));
  });
}
