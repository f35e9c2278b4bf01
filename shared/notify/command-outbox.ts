import type { Kysely, Transaction } from 'kysely';
import { commandSubjectKind, type Command } from '../contracts/commands.ts';
import type { Database } from '../db/database.ts';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Queues an API command in the caller's transaction. The outbox relay (processor role) publishes it on
 * `commands.v1.<issue|alert>` only after the commit, in order with the other rows of `aggregate`: a change that
 * rolls back announces nothing, and the API never waits on NATS while it holds the row lock.
 */
export async function enqueueCommand(db: Db, command: Command, aggregate: string): Promise<void> {
  await db
    .insertInto('outbox')
    .values({ subject_kind: commandSubjectKind(command), msg_id: command.command_id, payload: JSON.stringify(command), aggregate, stream: 'commands', published_at: null })
    .execute();
}

/** The outbox relay's doorbell, as every process can ring it: core NATS (or the in-process bus when embedded). */
export interface OutboxDoorbell {
  broadcast(subject: string, data: Uint8Array): Promise<void>;
}

/**
 * After the commit: wakes the relay at once, wherever it runs. At most once and best effort (NATS may be down):
 * the relay's poll picks the rows up anyway.
 */
export function announceOutboxRows(bus: OutboxDoorbell, subject: string): void {
  bus.broadcast(subject, new Uint8Array()).catch(() => {});
}
