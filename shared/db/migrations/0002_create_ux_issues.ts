import { sql, type Kysely } from 'kysely';

/**
 * Frozen: UX issues (clusters of one signal type on one element of one page) and their evidence sessions.
 * One row per cluster key for its whole life: a resolved issue whose signals return becomes `regressed`,
 * it does not open a twin.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const ddl = `
    create table ux_issues (
      id uuid primary key,
      site_id uuid not null references sites(id) on delete cascade,
      page text not null,
      selector text not null,
      signal_type text not null,
      label text,
      title text not null,
      hypothesis text not null,
      signal_count integer not null,
      affected_sessions integer not null,
      severity real not null,
      status text not null default 'open',
      note text,
      assigned_to text,
      frozen boolean not null default false,
      merged_into uuid references ux_issues(id) on delete set null,
      first_signal_at timestamptz not null,
      last_signal_at timestamptz not null,
      resolved_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index ux_issues_cluster_idx on ux_issues (site_id, page, selector, signal_type);
    create index ux_issues_rank_idx on ux_issues (site_id, status, severity desc);
    create table issue_sessions (
      issue_id uuid not null references ux_issues(id) on delete cascade,
      session_id text not null,
      signals integer not null,
      last_signal_at timestamptz not null,
      primary key (issue_id, session_id)
    );
    create index issue_sessions_rank_idx on issue_sessions (issue_id, signals desc)
  `;
  for (const statement of ddl.split(/;\s*\n/).map((s) => s.trim()).filter(Boolean)) {
    await sql.raw(statement).execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('issue_sessions').ifExists().execute();
  await db.schema.dropTable('ux_issues').ifExists().execute();
}
