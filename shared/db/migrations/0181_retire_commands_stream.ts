import { sql, type Kysely } from 'kysely';

/**
 * The COMMANDS stream is retired: no role ever consumed it, so an issue changed by a person never reached webhooks.
 * API changes are now notifications on the NOTIFY stream, queued through the same outbox as the processor's
 * (`issue.updated`, `alert.acknowledged`, `alert.resolved`). Command rows, published or not, were read by nobody:
 * they are removed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`delete from outbox where stream = 'commands'`.execute(db);
  await sql`alter table outbox drop constraint if exists outbox_stream_check`.execute(db);
  await sql`alter table outbox add constraint outbox_stream_check check (stream in ('notify', 'replay'))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table outbox drop constraint if exists outbox_stream_check`.execute(db);
  await sql`alter table outbox add constraint outbox_stream_check check (stream in ('notify', 'commands', 'replay'))`.execute(
    db,
  );
}
