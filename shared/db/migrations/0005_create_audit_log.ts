import { sql, type Kysely } from 'kysely';

/**
 * Frozen: one row per write, stored in the write's own transaction (a change and its record exist together).
 * `site_id` has no foreign key: the record outlives the site it describes. Newest first is `id desc`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table audit_log (
      id bigserial primary key,
      org_id uuid not null references orgs(id) on delete cascade,
      site_id uuid,
      actor_type text not null,
      actor_id uuid,
      actor text not null,
      action text not null,
      target_type text not null,
      target_id text not null,
      summary jsonb not null,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index audit_log_org_idx on audit_log (org_id, id desc)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_log').ifExists().execute();
}
