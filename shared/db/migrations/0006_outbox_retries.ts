import { sql, type Kysely } from 'kysely';

/**
 * The outbox relay without long transactions: each row carries its aggregate (rows of one aggregate are published
 * in id order), its retry state (attempts, next attempt, last error, given up), and one lease row names the relay
 * that publishes, so several processors never publish out of order.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // One statement per call: the embedded PGlite runs a single statement per query.
  await sql`alter table outbox add column aggregate text, add column attempts integer not null default 0,
    add column next_attempt_at timestamptz, add column last_error text, add column failed_at timestamptz`.execute(db);
  await sql`drop index if exists outbox_unpublished_idx`.execute(db);
  await sql`create index outbox_pending_idx on outbox (id) where published_at is null and failed_at is null`.execute(
    db,
  );
  await sql`create table outbox_lease (name text primary key, holder text not null, until timestamptz not null)`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists outbox_lease`.execute(db);
  await sql`drop index if exists outbox_pending_idx`.execute(db);
  await sql`create index outbox_unpublished_idx on outbox (id) where published_at is null`.execute(db);
  await sql`alter table outbox drop column aggregate, drop column attempts, drop column next_attempt_at, drop column last_error, drop column failed_at`.execute(
    db,
  );
}
