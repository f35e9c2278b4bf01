import { sql, type Insertable, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database, NotificationDeliveryTable } from '../database.ts';

type Db = Kysely<Database> | Transaction<Database>;
export type DeliveryRow = Selectable<NotificationDeliveryTable>;
export type NewDelivery = Insertable<NotificationDeliveryTable>;

/**
 * Queues deliveries; one event reaches one target once (unique (event, channel, endpoint or target)), so a
 * fan-out that runs again after a redelivered notification inserts nothing. Returns how many were new.
 */
export async function insertDeliveries(db: Db, rows: readonly NewDelivery[]): Promise<number> {
  if (rows.length === 0) return 0;
  const r = await db.insertInto('notification_deliveries').values(rows as NewDelivery[]).onConflict((oc) => oc.doNothing()).executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0);
}

/**
 * Claims up to `limit` due deliveries for one dispatcher: their due time moves `leaseMs` ahead, so no other
 * dispatcher takes them while this one sends (rows another dispatcher is claiming right now are skipped), and
 * a dispatcher that dies mid-send leaves them due again when the lease ends.
 */
export async function claimDueDeliveries(db: Kysely<Database>, now: Date, limit: number, leaseMs: number): Promise<DeliveryRow[]> {
  const { rows } = await sql<DeliveryRow>`
    update notification_deliveries d set next_attempt_at = ${new Date(now.getTime() + leaseMs)}, updated_at = ${now}
    where d.id in (
      select id from notification_deliveries
      where status = 'pending' and next_attempt_at <= ${now}
      order by next_attempt_at limit ${limit} for update skip locked)
    returning d.*`.execute(db);
  return rows;
}

export interface AttemptRecord {
  deliveryId: string;
  orgId: string;
  /** The attempt count the claim saw: the write applies only if no one else recorded an attempt since. */
  claimedAttempts: number;
  status: 'succeeded' | 'failed';
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
  startedAt: Date;
  /** Due time of the next attempt; null: the delivery is finished (succeeded, or failed for good). */
  nextAttemptAt: Date | null;
  now: Date;
}

/** Stores one attempt and moves the delivery on. Returns false when the claim had gone stale (nothing written). */
export async function recordAttempt(trx: Transaction<Database>, a: AttemptRecord): Promise<boolean> {
  const finalStatus = a.status === 'succeeded' ? 'succeeded' : a.nextAttemptAt ? 'pending' : 'failed';
  const updated = await trx
    .updateTable('notification_deliveries')
    .set({
      status: finalStatus, attempts: a.claimedAttempts + 1, last_http_status: a.httpStatus, last_error: a.error, updated_at: a.now,
      next_attempt_at: a.nextAttemptAt ?? a.now, completed_at: finalStatus === 'pending' ? null : a.now,
    })
    .where('id', '=', a.deliveryId)
    .where('attempts', '=', a.claimedAttempts)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 0) return false;
  await trx
    .insertInto('delivery_attempts')
    .values({
      delivery_id: a.deliveryId, org_id: a.orgId, attempt: a.claimedAttempts + 1, status: a.status, http_status: a.httpStatus,
      error: a.error, duration_ms: Math.round(a.durationMs), started_at: a.startedAt, next_attempt_at: finalStatus === 'pending' ? a.nextAttemptAt : null,
    })
    .execute();
  return true;
}

/** Finishes a delivery without an attempt (its endpoint was disabled or removed meanwhile). */
export async function abandonDelivery(db: Db, id: string, reason: string, now: Date): Promise<void> {
  await db.updateTable('notification_deliveries').set({ status: 'failed', last_error: reason, completed_at: now, updated_at: now }).where('id', '=', id).where('status', '=', 'pending').execute();
}

export interface DeliveryLogEntry {
  id: string;
  delivery_id: string;
  channel: string;
  endpoint_id: string | null;
  target: string;
  event_id: string;
  event_type: string;
  site_id: string | null;
  attempt: number;
  status: string;
  http_status: number | null;
  error: string | null;
  duration_ms: number | null;
  at: Date;
  next_attempt_at: Date | null;
}

/**
 * The org's delivery log, newest first: every attempt made, plus one `pending` line per delivery still waiting
 * for its next attempt (its number, its due time). `siteId` narrows to one site's (site-scoped keys).
 */
export async function listDeliveryLog(db: Db, orgId: string, limit: number, siteId?: string): Promise<DeliveryLogEntry[]> {
  const siteFilter = siteId ? sql`and d.site_id = ${siteId}` : sql``;
  const { rows } = await sql<DeliveryLogEntry>`
    select * from (
      select 'att_' || a.id as id, d.id as delivery_id, d.channel, d.endpoint_id, d.target, d.event_id, d.event_type, d.site_id,
             a.attempt, a.status, a.http_status, a.error, a.duration_ms, a.started_at as at, a.next_attempt_at
      from delivery_attempts a join notification_deliveries d on d.id = a.delivery_id
      where a.org_id = ${orgId} ${siteFilter}
      union all
      select 'pen_' || d.id, d.id, d.channel, d.endpoint_id, d.target, d.event_id, d.event_type, d.site_id,
             d.attempts + 1, 'pending', null, null, null, d.updated_at, d.next_attempt_at
      from notification_deliveries d
      where d.org_id = ${orgId} and d.status = 'pending' ${siteFilter}
    ) log order by at desc, attempt desc limit ${limit}`.execute(db);
  return rows;
}

/**
 * The common case in one statement (atomic on its own, one round trip): marks the delivery succeeded, logs the
 * attempt, and clears the webhook endpoint's failure streak if it has one. Returns false when the claim had gone
 * stale (nothing written).
 */
export async function recordSuccess(db: Kysely<Database>, a: Omit<AttemptRecord, 'status' | 'error' | 'nextAttemptAt'>, webhookEndpointId: string | null): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    with d as (
      update notification_deliveries set status = 'succeeded', attempts = ${a.claimedAttempts + 1}, last_http_status = ${a.httpStatus},
        last_error = null, updated_at = ${a.now}, next_attempt_at = ${a.now}, completed_at = ${a.now}
      where id = ${a.deliveryId} and attempts = ${a.claimedAttempts} and status = 'pending'
      returning id),
    att as (
      insert into delivery_attempts (delivery_id, org_id, attempt, status, http_status, error, duration_ms, started_at, next_attempt_at)
      select id, ${a.orgId}, ${a.claimedAttempts + 1}, 'succeeded', ${a.httpStatus}, null, ${Math.round(a.durationMs)}, ${a.startedAt}, null from d),
    e as (
      update webhook_endpoints set consecutive_failures = 0, failing_since = null
      where id = ${webhookEndpointId} and exists (select 1 from d) and (consecutive_failures <> 0 or failing_since is not null))
    select id from d`.execute(db);
  return rows.length > 0;
}
