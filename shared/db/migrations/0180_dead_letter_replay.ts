import { sql, type Kysely } from 'kysely';

/**
 * `friction dead-letters replay` puts a dead letter back on its subject through the outbox, in the same
 * transaction that marks the dead letter replayed and by whom: a replay happens once however often the command
 * runs, and only if its row committed. A `replay` outbox row carries the dead letter's subject in `subject_kind`
 * and its payload as stored (a JSON string), and is published as it is.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table dead_letters add column replayed_at timestamptz, add column replayed_by text`.execute(db);
  await sql`alter table outbox drop constraint if exists outbox_stream_check`.execute(db);
  await sql`alter table outbox add constraint outbox_stream_check check (stream in ('notify', 'commands', 'replay'))`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from outbox where stream = 'replay'`.execute(db);
  await sql`alter table outbox drop constraint if exists outbox_stream_check`.execute(db);
  await sql`alter table outbox add constraint outbox_stream_check check (stream in ('notify', 'commands'))`.execute(db);
  await sql`alter table dead_letters drop column replayed_at, drop column replayed_by`.execute(db);
}
