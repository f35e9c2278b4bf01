import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/database.ts';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * One row for the transactional outbox: the only way anything (the processor's batches and tick, the API's writes,
 * a dead-letter replay) announces a change. Rows exist exactly when the change they describe committed; the
 * processor's relay publishes them afterwards (processor/notify/outbox-relay.ts).
 */
export interface OutboxMessage {
  /** `notify`: a webhook event kind, e.g. `issue.created`; `replay`: the full subject the payload goes back to. */
  kind: string;
  /** Stable id of this message: the stream drops a second publish of it. */
  msgId: string;
  /** `notify`: the event's facts; `replay`: the message body exactly as it was stored (a string). */
  payload: Record<string, unknown> | string;
  /** Rows of one aggregate (e.g. `issue:<id>`, `alert:<id>`) are published in the order they were queued. */
  aggregate?: string;
  /** `notify` (default): published on `notify.v1.<kind>` for the dispatcher; `replay`: published as it is on `kind`. */
  stream?: 'notify' | 'replay';
}

/** Queues messages in the caller's transaction. Column arrays: a fixed parameter count however many a batch raises. */
export async function enqueueOutbox(db: Db, messages: readonly OutboxMessage[]): Promise<void> {
  if (messages.length === 0) return;
  await sql`
    insert into outbox (subject_kind, msg_id, payload, aggregate, stream)
    select * from unnest(${messages.map((m) => m.kind)}::text[], ${messages.map((m) => m.msgId)}::text[],
                         ${messages.map((m) => JSON.stringify(m.payload))}::jsonb[], ${messages.map((m) => m.aggregate ?? null)}::text[],
                         ${messages.map((m) => m.stream ?? 'notify')}::text[])`.execute(db);
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
