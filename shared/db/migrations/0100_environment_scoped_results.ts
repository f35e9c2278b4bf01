import { sql, type Kysely } from 'kysely';

/**
 * Frozen once merged: the engine's results are kept per (site, environment). Staging traffic used to be stored in
 * `events` only and measured by the deploy cycle as one site-level number (`environment_scores`); now staging is
 * folded like production into its own page scores, score history, issues, elements and signals.
 * - `environment` (not null, default 'production', only 'production' or 'staging') on `page_scores`,
 *   `score_history`, `ux_issues`, `page_elements` and `signals`; existing rows are production's (staging never
 *   reached them), and the environment joins every key and index the engine and the read routes look rows up by.
 * - Staging signals of the last 90 days (the `signals` retention) are copied from `events` into `signals`, so the
 *   staging clusters rebuild from the same table as production's.
 * - `environment_scores` is dropped: a staging deploy's confusion_before is staging's overall page score now.
 * `events.environment` and `sessions.environment` stay as they were (null means production, as the SDK sends it).
 */
const ENV_COLUMN = sql.raw(
  `environment text not null default 'production' check (environment in ('production', 'staging'))`,
);

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['page_scores', 'score_history', 'ux_issues', 'page_elements', 'signals']) {
    await sql`alter table ${sql.table(table)} add column ${ENV_COLUMN}`.execute(db);
  }
  await sql`alter table page_scores drop constraint page_scores_pkey`.execute(db);
  await sql`alter table page_scores add primary key (site_id, environment, page, window_start)`.execute(db);
  await sql`drop index page_scores_latest_idx`.execute(db);
  await sql`create index page_scores_latest_idx on page_scores (site_id, environment, window_start desc)`.execute(db);

  await sql`alter table score_history drop constraint score_history_pkey`.execute(db);
  await sql`alter table score_history add primary key (site_id, environment, page, day)`.execute(db);

  await sql`drop index ux_issues_cluster_idx`.execute(db);
  await sql`create unique index ux_issues_cluster_idx on ux_issues (site_id, environment, page, cluster_selector, signal_type)`.execute(
    db,
  );
  await sql`drop index ux_issues_rank_idx`.execute(db);
  await sql`create index ux_issues_rank_idx on ux_issues (site_id, environment, status, severity desc)`.execute(db);

  await sql`alter table page_elements drop constraint page_elements_pkey`.execute(db);
  await sql`alter table page_elements add primary key (site_id, environment, page, cluster_selector)`.execute(db);
  await sql`drop index page_elements_rank_idx`.execute(db);
  await sql`create index page_elements_rank_idx on page_elements (site_id, environment, friction_score desc)`.execute(
    db,
  );

  await sql`drop index signals_page_idx`.execute(db);
  await sql`create index signals_page_idx on signals (site_id, environment, page, ts desc)`.execute(db);
  await sql`
    insert into signals (site_id, event_id, ts, session_id, page, signal_type, selector, label, x, y, vx, vy, px, py, device, environment)
    select site_id, id, ts, session_id, page, coalesce(signal, 'unknown'), selector, label, x, y, vx, vy, px, py, device, 'staging'
    from events where type = 'signal' and environment = 'staging' and ts >= now() - interval '90 days'
    on conflict do nothing`.execute(db);

  await db.schema.dropTable('environment_scores').ifExists().execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create table environment_scores (
      site_id uuid not null references sites(id) on delete cascade,
      environment text not null,
      score real not null,
      sessions integer not null,
      updated_at timestamptz not null,
      primary key (site_id, environment)
    )`.execute(db);
  // Staging results have no place in the old keys: they go, production's stay.
  for (const table of ['page_scores', 'score_history', 'ux_issues', 'page_elements', 'signals']) {
    await sql`delete from ${sql.table(table)} where environment = 'staging'`.execute(db);
  }
  await sql`drop index signals_page_idx`.execute(db);
  await sql`create index signals_page_idx on signals (site_id, page, ts desc)`.execute(db);
  await sql`alter table page_elements drop constraint page_elements_pkey`.execute(db);
  await sql`alter table page_elements add primary key (site_id, page, cluster_selector)`.execute(db);
  await sql`drop index page_elements_rank_idx`.execute(db);
  await sql`create index page_elements_rank_idx on page_elements (site_id, friction_score desc)`.execute(db);
  await sql`drop index ux_issues_cluster_idx`.execute(db);
  await sql`create unique index ux_issues_cluster_idx on ux_issues (site_id, page, cluster_selector, signal_type)`.execute(
    db,
  );
  await sql`drop index ux_issues_rank_idx`.execute(db);
  await sql`create index ux_issues_rank_idx on ux_issues (site_id, status, severity desc)`.execute(db);
  await sql`alter table score_history drop constraint score_history_pkey`.execute(db);
  await sql`alter table score_history add primary key (site_id, page, day)`.execute(db);
  await sql`alter table page_scores drop constraint page_scores_pkey`.execute(db);
  await sql`alter table page_scores add primary key (site_id, page, window_start)`.execute(db);
  await sql`drop index page_scores_latest_idx`.execute(db);
  await sql`create index page_scores_latest_idx on page_scores (site_id, window_start desc)`.execute(db);
  for (const table of ['page_scores', 'score_history', 'ux_issues', 'page_elements', 'signals']) {
    await sql`alter table ${sql.table(table)} drop column environment`.execute(db);
  }
}
