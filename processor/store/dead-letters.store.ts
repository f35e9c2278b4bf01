import type { Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { BusMessage } from '../../shared/bus/bus.ts';
import { toStorableText } from '../../shared/text.ts';

/**
 * Records a message the processor gave up on, with its payload, so an operator can inspect or replay it. Text the
 * database cannot hold is replaced (U+FFFD): the row that makes termination safe must never fail on its content.
 */
export async function insertDeadLetter(db: Kysely<Database>, stream: string, msg: BusMessage, reason: string): Promise<void> {
  await db
    .insertInto('dead_letters')
    .values({ stream, subject: msg.subject, stream_seq: msg.seq, reason: toStorableText(reason.slice(0, 2000)), payload: toStorableText(new TextDecoder().decode(msg.data).slice(0, 1_000_000)) })
    .execute();
}
