import { sql, type Kysely } from 'kysely';

/**
 * Frozen: the friction engine's derived tables. UX issues (clusters of one signal type on one element of one
 * page, keyed by the canonical selector) with their evidence sessions (a small jsonb list, rewritten with the issue:
 * a row per session would cost an index and a foreign-key check per row on every batch) and update history; element aggregates;
 * the transactional outbox of notifications (written in the batch transaction, relayed to the stream after);
 * and job runs (the nightly triage runs once per site and day, whichever processor gets there first).
 * One issue row per cluster key for its whole life: a resolved issue whose signals return becomes `regressed`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const ddl = `
    create table ux_issues (
      id uuid primary key,
      site_id uuid not null references sites(id) on delete cascade,
      page text not null,
      cluster_selector text not null,
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
      evidence jsonb not null default '[]',
      first_signal_at timestamptz not null,
      last_signal_at timestamptz not null,
      resolved_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index ux_issues_cluster_idx on ux_issues (site_id, page, cluster_selector, signal_type);
    create index ux_issues_rank_idx on ux_issues (site_id, status, severity desc);
    create table issue_updates (
      id bigserial primary key,
      issue_id uuid not null references ux_issues(id) on delete cascade,
      source text not null,
      kind text not null,
      changes jsonb not null,
      reason text,
      created_at timestamptz not null default now()
    );
    create index issue_updates_issue_idx on issue_updates (issue_id, id desc);
    create table page_elements (
      site_id uuid not null references sites(id) on delete cascade,
      page text not null,
      cluster_selector text not null,
      selector text not null,
      label text,
      signals jsonb not null,
      signal_count integer not null,
      friction_score real not null,
      dominant_signal text,
      affected_users integer not null,
      recommendation text,
      last_signal_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (site_id, page, cluster_selector)
    );
    create index page_elements_rank_idx on page_elements (site_id, friction_score desc);
    create table outbox (
      id bigserial primary key,
      subject_kind text not null,
      msg_id text not null,
      payload jsonb not null,
      created_at timestamptz not null default now(),
      published_at timestamptz
    );
    create index outbox_unpublished_idx on outbox (id) where published_at is null;
    create table job_runs (
      job text not null,
      scope text not null,
      period text not null,
      ran_at timestamptz not null default now(),
      primary key (job, scope, period)
    )
  `;
  for (const statement of ddl
    .split(/;\s*\n/)
    .map((s) => s.trim())
    .filter(Boolean)) {
    await sql.raw(statement).execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['job_runs', 'outbox', 'page_elements', 'issue_updates'])
    await db.schema.dropTable(t).ifExists().execute();
  await db.schema.dropTable('ux_issues').ifExists().execute();
}
