import { sql, type Kysely } from 'kysely';

/**
 * Frozen: deploys and what the processor measures after them.
 * - `deploys`: one row per recorded deploy. `idempotency_key` answers a retried record call (24 h); the
 *   before/after scores and the cohort used for "after" are written by the processor's deploy cycle, which sets
 *   `measured_until` on each measurement and `frozen_at` when the after window closes (next deploy or 24 h).
 *   `looks_done` names the verification looks already taken.
 * - `deploy_verifications`: one row per (deploy, issue, look): the test's counts, p-value and result, shown as the
 *   issue's `verifications` and the deploy's related issues.
 * - `ux_issues.introduced_by_deploy`: the deploy after which a new issue was first seen.
 * - `environment_scores`: the overall score of a non-production environment (staging traffic never enters the
 *   page scores), refreshed each scoring cycle: a staging deploy's confusion_before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table deploys (
      id uuid primary key,
      site_id uuid not null references sites(id) on delete cascade,
      environment text not null check (environment in ('production', 'staging')),
      version text not null,
      commit_sha text,
      url text,
      description text,
      confusion_before real not null,
      confusion_after real,
      delta real,
      cohort jsonb,
      recorded_at timestamptz not null,
      measured_until timestamptz,
      frozen_at timestamptz,
      looks_done text[] not null default '{}',
      idempotency_key text,
      created_by text not null,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index deploys_site_env_idx on deploys (site_id, environment, recorded_at desc)`.execute(db);
  await sql`create index deploys_idempotency_idx on deploys (site_id, idempotency_key, recorded_at desc) where idempotency_key is not null`.execute(
    db,
  );
  await sql`
    create table deploy_verifications (
      id bigserial primary key,
      deploy_id uuid not null references deploys(id) on delete cascade,
      issue_id uuid not null references ux_issues(id) on delete cascade,
      site_id uuid not null,
      look text not null,
      test text not null check (test in ('fix', 'regression')),
      result text not null check (result in ('verified', 'not_verified', 'insufficient_data', 'regressed', 'not_regressed')),
      signal_count_before integer not null,
      signal_count_after integer not null,
      affected_before integer not null,
      affected_after integer not null,
      sessions_before integer not null,
      sessions_after integer not null,
      p_value double precision,
      alpha double precision not null,
      verified_at timestamptz not null,
      unique (deploy_id, issue_id, look)
    )`.execute(db);
  await sql`create index deploy_verifications_issue_idx on deploy_verifications (issue_id, verified_at)`.execute(db);
  await sql`
    create table environment_scores (
      site_id uuid not null references sites(id) on delete cascade,
      environment text not null,
      score real not null,
      sessions integer not null,
      updated_at timestamptz not null,
      primary key (site_id, environment)
    )`.execute(db);
  await sql`alter table ux_issues add column introduced_by_deploy uuid references deploys(id) on delete set null`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table ux_issues drop column if exists introduced_by_deploy`.execute(db);
  await db.schema.dropTable('environment_scores').ifExists().execute();
  await db.schema.dropTable('deploy_verifications').ifExists().execute();
  await db.schema.dropTable('deploys').ifExists().execute();
}
