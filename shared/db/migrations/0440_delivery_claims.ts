import { sql, type Kysely } from 'kysely';

/**
 * Whether a pending delivery's due time is a dispatcher's claim (a lease while it sends) rather than a retry the
 * dispatcher scheduled: the two look the same in `next_attempt_at`. The embedded default, whose database one process
 * opens, finds at start only claims of an earlier life killed mid-send, and hands them back at once instead of
 * waiting out the 60 s lease (processor/dispatcher/dispatcher.ts); a scheduled retry (a receiver's Retry-After among
 * them) keeps its time.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table notification_deliveries add column if not exists claimed boolean not null default false`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table notification_deliveries drop column if exists claimed`.execute(db);
}
