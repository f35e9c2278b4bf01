import { sql, type Kysely } from 'kysely';

/**
 * API commands (issue.updated, alert.status_changed) go through the outbox too, so they are published only after
 * the change they describe committed: each row names the stream it is relayed to.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table outbox add column stream text not null default 'notify' check (stream in ('notify', 'commands'))`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table outbox drop column stream`.execute(db);
}
