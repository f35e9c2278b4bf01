import { sql, type Kysely } from 'kysely';

/**
 * Deliveries of one alert (or one issue) to one target go out in the order they were queued: a retried trigger
 * must not land after its resolve (a PagerDuty incident nothing closes). `order_key` names the alert or issue
 * (null: no order needed), `queued_seq` is the queue order; the claim takes a delivery only when no earlier
 * delivery of the same key to the same channel, endpoint and target is still pending (see deliveries.queries.ts).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table notification_deliveries add column order_key text, add column queued_seq bigint generated always as identity`.execute(
    db,
  );
  await sql`create index notification_deliveries_order_idx on notification_deliveries (order_key, channel, queued_seq) where status = 'pending' and order_key is not null`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists notification_deliveries_order_idx`.execute(db);
  await sql`alter table notification_deliveries drop column order_key, drop column queued_seq`.execute(db);
}
