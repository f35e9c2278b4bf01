import { sql, type Kysely } from 'kysely';

/**
 * Frozen: delivery state of notifications (webhooks and alert channels), the delivery log, endpoint failure
 * streaks, and degradation events.
 * - `notification_deliveries`: one row per (event, target). The unique key is what makes fan-out idempotent
 *   (a redelivered NOTIFY message inserts nothing new); `next_attempt_at` doubles as the claim lease, so a
 *   dispatcher that dies mid-send leaves the row due again once the lease passes (nothing lost), and
 *   `for update skip locked` keeps two dispatchers off one row (nothing sent twice at once).
 * - `delivery_attempts`: one row per attempt made, the log `/query/webhook-deliveries` reads.
 * - `alert_rule_states`: what rule evaluation remembers per (rule, page) between evaluations.
 * - `degradation_events`: something degraded (started_at) and, later, recovered (recovered_at); org_id null
 *   means instance-wide.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table notification_deliveries (
      id uuid primary key,
      event_id text not null,
      event_type text not null,
      org_id uuid not null references orgs(id) on delete cascade,
      site_id uuid,
      channel text not null,
      endpoint_id uuid,
      target text not null,
      body text not null,
      status text not null default 'pending',
      attempts integer not null default 0,
      next_attempt_at timestamptz not null,
      last_http_status integer,
      last_error text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      completed_at timestamptz
    )`.execute(db);
  await sql`create unique index notification_deliveries_once_idx on notification_deliveries (event_id, channel, (coalesce(endpoint_id::text, target)))`.execute(
    db,
  );
  await sql`create index notification_deliveries_due_idx on notification_deliveries (next_attempt_at) where status = 'pending'`.execute(
    db,
  );
  await sql`create index notification_deliveries_org_idx on notification_deliveries (org_id, created_at desc)`.execute(
    db,
  );
  await sql`
    create table delivery_attempts (
      id bigserial primary key,
      delivery_id uuid not null references notification_deliveries(id) on delete cascade,
      org_id uuid not null,
      attempt integer not null,
      status text not null,
      http_status integer,
      error text,
      duration_ms integer not null,
      started_at timestamptz not null,
      next_attempt_at timestamptz
    )`.execute(db);
  await sql`create index delivery_attempts_org_idx on delivery_attempts (org_id, id desc)`.execute(db);
  await sql`create index delivery_attempts_delivery_idx on delivery_attempts (delivery_id)`.execute(db);
  await sql`
    alter table webhook_endpoints
      add column consecutive_failures integer not null default 0,
      add column failing_since timestamptz,
      add column disabled_at timestamptz,
      add column disabled_reason text`.execute(db);
  await sql`
    create table degradation_events (
      id uuid primary key,
      org_id uuid references orgs(id) on delete cascade,
      kind text not null,
      subject text not null,
      message text not null,
      started_at timestamptz not null,
      recovered_at timestamptz,
      details jsonb not null default '{}'
    )`.execute(db);
  await sql`create unique index degradation_events_open_idx on degradation_events (kind, subject) where recovered_at is null`.execute(
    db,
  );
  await sql`create index degradation_events_org_idx on degradation_events (org_id, started_at desc)`.execute(db);
  // Per (rule, page): the evaluation memory of processor/alerts/rules.ts (consecutive holds, flapping, auto-resolve clock).
  await sql`
    create table alert_rule_states (
      rule_id uuid not null references alert_rules(id) on delete cascade,
      page text not null,
      recent text not null default '',
      consecutive integer not null default 0,
      clear_since timestamptz,
      held_back_since timestamptz,
      held_back_reason text,
      updated_at timestamptz not null,
      primary key (rule_id, page)
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('alert_rule_states').ifExists().execute();
  await db.schema.dropTable('degradation_events').ifExists().execute();
  await db.schema.dropTable('delivery_attempts').ifExists().execute();
  await db.schema.dropTable('notification_deliveries').ifExists().execute();
  await sql`alter table webhook_endpoints drop column if exists consecutive_failures, drop column if exists failing_since, drop column if exists disabled_at, drop column if exists disabled_reason`.execute(
    db,
  );
}
