import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';

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
  const { rows } = await sql<{ holder: string }>`
    insert into outbox_lease (name, holder, until) values ('relay', ${holder}, now() + make_interval(secs => ${ttlMs / 1000}))
    on conflict (name) do update set holder = excluded.holder, until = excluded.until
      where outbox_lease.holder = excluded.holder or outbox_lease.until < now()
    returning holder`.execute(db);
  return rows[0]?.holder === holder;
}

/** Gives the lease up (shutdown), so another relay takes over at once. */
export async function releaseOutboxLease(db: Db, holder: string): Promise<void> {
  await sql`delete from outbox_lease where name = 'relay' and holder = ${holder}`.execute(db);
}

/** The oldest queued rows (not published, not given up), in id order, due or not: the relay decides. */
export async function loadPendingOutbox(db: Db, limit: number): Promise<PendingOutboxRow[]> {
  const { rows } = await sql<{
    id: number;
    subject_kind: string;
    msg_id: string;
    payload: unknown;
    aggregate: string | null;
    stream: 'notify' | 'replay';
    attempts: number;
    next_ms: number | null;
    raw: string | null;
  }>`
    select id, subject_kind, msg_id, payload, case when stream = 'replay' then payload #>> '{}' end as raw, aggregate, stream, attempts, (extract(epoch from next_attempt_at) * 1000)::float8 as next_ms
    from outbox where published_at is null and failed_at is null order by id limit ${limit}`.execute(db);
  return rows.map((r) => ({
    id: Number(r.id),
    kind: r.subject_kind,
    msgId: r.msg_id,
    aggregate: r.aggregate,
    stream: r.stream,
    attempts: r.attempts,
    nextAttemptAt: r.next_ms,
    payload: (typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload) as Record<string, unknown>,
    raw: r.raw,
  }));
}

export async function markOutboxPublished(db: Db, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`update outbox set published_at = now(), last_error = null where id = any(${ids}::bigint[])`.execute(db);
}

/** Records a failed publish: the next attempt time, the error, and (`counts`) one more attempt; `give up` ends it. */
export async function markOutboxFailed(
  db: Db,
  id: number,
  o: { error: string; retryInMs: number; counts: boolean; giveUp: boolean },
): Promise<void> {
  await sql`
    update outbox set attempts = attempts + ${o.counts ? 1 : 0}, last_error = ${o.error.slice(0, 1000)},
      next_attempt_at = now() + make_interval(secs => ${o.retryInMs / 1000}),
      failed_at = ${o.giveUp ? sql`now()` : sql`null`}
    where id = ${id}`.execute(db);
}

/** Deletes published notifications older than `days` (the stream and the delivery log keep them). */
export async function pruneOutbox(db: Db, days: number): Promise<void> {
  await sql`delete from outbox where coalesce(published_at, failed_at) < now() - make_interval(days => ${days})`.execute(
    db,
  );
}
