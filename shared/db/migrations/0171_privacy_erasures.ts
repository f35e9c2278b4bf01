import { sql, type Kysely } from 'kysely';

/**
 * Erasures of observed visitors (issue 30 item 8). The API deletes a session's (or an anonymous id's) events,
 * signals and session rows at once and records the erasure here; the processor owning the site then rebuilds that
 * site's in-memory windows from what remains and rewrites its scores, issues and elements (`applied_at`). The row
 * names the site and the time only: the erased ids are not kept.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table privacy_erasures (
      id uuid primary key,
      site_id uuid not null references sites(id) on delete cascade,
      requested_at timestamptz not null default now(),
      applied_at timestamptz
    )`.execute(db);
  await sql`create index privacy_erasures_pending_idx on privacy_erasures (site_id) where applied_at is null`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('privacy_erasures').ifExists().execute();
}
