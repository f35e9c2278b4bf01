import { sql, type Insertable, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database } from '../database.ts';
import type { NotificationDeliveryTable } from '../tables/delivery.table.ts';

type Db = Kysely<Database> | Transaction<Database>;
export type DeliveryRow = Selectable<NotificationDeliveryTable>;
export type NewDelivery = Insertable<NotificationDeliveryTable>;

/**
 * Queues deliveries; one event reaches one target once (unique (event, channel, endpoint or target)), so a
 * fan-out that runs again after a redelivered notification inserts nothing. Returns how many were new.
 */
export async function insertDeliveries(db: Db, rows: readonly NewDelivery[]): Promise<number> {
  if (rows.length === 0) return 0;
  const r = await db
    .insertInto('notification_deliveries')
    .values(rows as NewDelivery[])
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0);
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
export async function listDeliveryLog(
  db: Db,
  orgId: string,
  limit: number,
  siteId?: string,
): Promise<DeliveryLogEntry[]> {
  const siteFilter = siteId ? sql`and d.site_id = ${siteId}` : sql``;
  // Raw: a union of attempts and pending deliveries with literal columns, ordered and limited as one log.
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
