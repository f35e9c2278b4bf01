import { sql, type Kysely } from 'kysely';

/**
 * Frozen: what the write API manages. Alert rules and the alerts they raise (columns are the spec's Alert and
 * Alert rule resources; the evaluator fills `last_fired_at` for cooldowns), webhook endpoints (the signing
 * secret is sealed, not hashed: the dispatcher must sign with it), integrations (secret config fields sealed
 * apart from the rest), environments with one SDK config each, and annotations.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const ddl = `
    create table alert_rules (
      id uuid primary key,
      site_id uuid not null references sites(id) on delete cascade,
      name text not null,
      trigger_type text not null,
      threshold integer not null check (threshold between 0 and 1000),
      cooldown_minutes integer not null,
      channels text[] not null default '{}',
      page_pattern text,
      slack_channel text,
      enabled boolean not null default true,
      last_fired_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index alert_rules_site_idx on alert_rules (site_id, created_at);
    create table alerts (
      id uuid primary key,
      site_id uuid not null references sites(id) on delete cascade,
      rule_id uuid references alert_rules(id) on delete set null,
      rule_name text not null,
      page text,
      trigger_type text not null,
      score_before real,
      score_after real,
      status text not null default 'fired' check (status in ('fired', 'acknowledged', 'investigating', 'resolved')),
      details jsonb not null default '{}',
      triggered_at timestamptz not null,
      acknowledged_at timestamptz,
      resolved_at timestamptz,
      resolved_reason text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index alerts_site_idx on alerts (site_id, status, triggered_at desc);
    create index alerts_rule_idx on alerts (rule_id, triggered_at desc);
    create table webhook_endpoints (
      id uuid primary key,
      org_id uuid not null references orgs(id) on delete cascade,
      site_id uuid references sites(id) on delete cascade,
      url text not null,
      description text,
      events text[] not null,
      active boolean not null default true,
      secret_sealed text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      deleted_at timestamptz
    );
    create index webhook_endpoints_org_idx on webhook_endpoints (org_id, created_at);
    create table integrations (
      id uuid primary key,
      org_id uuid not null references orgs(id) on delete cascade,
      site_id uuid not null references sites(id) on delete cascade,
      provider text not null,
      config jsonb not null,
      secret_fields text[] not null,
      secrets_sealed text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index integrations_site_provider_idx on integrations (site_id, provider);
    create index integrations_org_idx on integrations (org_id);
    create table environments (
      id uuid primary key,
      site_id uuid not null references sites(id) on delete cascade,
      name text not null,
      created_at timestamptz not null default now(),
      unique (site_id, name)
    );
    create table sdk_configs (
      environment_id uuid primary key references environments(id) on delete cascade,
      site_id uuid not null references sites(id) on delete cascade,
      config jsonb not null,
      updated_at timestamptz not null default now()
    );
    create index sdk_configs_site_idx on sdk_configs (site_id);
    create table annotations (
      id uuid primary key,
      site_id uuid not null references sites(id) on delete cascade,
      message text not null,
      page text,
      occurred_at timestamptz not null,
      created_by text not null,
      created_at timestamptz not null default now()
    );
    create index annotations_site_idx on annotations (site_id, occurred_at desc)
  `;
  for (const statement of ddl
    .split(/;\s*\n/)
    .map((s) => s.trim())
    .filter(Boolean)) {
    await sql.raw(statement).execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of [
    'annotations',
    'sdk_configs',
    'environments',
    'integrations',
    'webhook_endpoints',
    'alerts',
    'alert_rules',
  ]) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
