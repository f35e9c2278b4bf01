import { sql, type Kysely } from 'kysely';

/**
 * Frozen: the core tables of the event pipeline. Time-series tables become TimescaleDB hypertables when
 * the extension is available (with retention and compression), plain tables with the same indexes otherwise.
 * Unique keys of hypertables must contain the time column, so event identity is (site_id, id, ts): a retried
 * event carries the same ts, so redeliveries still collide.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // One statement per call: PGlite's extended protocol takes a single statement at a time.
  const ddl = `
    create table orgs (
      id uuid primary key,
      name text not null,
      plan text not null default 'grow',
      trial_ends_at timestamptz,
      created_at timestamptz not null default now()
    );
    create table sites (
      id uuid primary key,
      org_id uuid not null references orgs(id) on delete cascade,
      name text not null,
      url text not null,
      status text not null default 'active',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index sites_org_idx on sites (org_id);
    create table api_keys (
      id uuid primary key,
      org_id uuid not null references orgs(id) on delete cascade,
      site_id uuid references sites(id) on delete cascade,
      key_type text not null,
      key_prefix text not null,
      key_hash text not null unique,
      scopes text[] not null,
      name text,
      created_at timestamptz not null default now(),
      revoked_at timestamptz
    );
    create index api_keys_site_idx on api_keys (site_id);

    create table events (
      site_id uuid not null,
      id uuid not null,
      ts timestamptz not null,
      received_at timestamptz not null,
      session_id text not null,
      type text not null,
      page text not null,
      signal text,
      name text,
      selector text,
      label text,
      x smallint, y smallint, vx smallint, vy smallint, px smallint, py smallint,
      value double precision,
      meta jsonb,
      device text not null,
      source text,
      app_version text,
      environment text
    );
    create unique index events_identity_idx on events (site_id, id, ts);
    create index events_site_ts_idx on events (site_id, ts desc);
    create index events_session_idx on events (site_id, session_id, ts);

    create table signals (
      site_id uuid not null,
      event_id uuid not null,
      ts timestamptz not null,
      session_id text not null,
      page text not null,
      signal_type text not null,
      selector text,
      label text,
      x smallint, y smallint, vx smallint, vy smallint, px smallint, py smallint,
      device text not null
    );
    create unique index signals_identity_idx on signals (site_id, event_id, ts);
    create index signals_page_idx on signals (site_id, page, ts desc);

    create table sessions (
      site_id uuid not null,
      id text not null,
      started_at timestamptz not null,
      last_seen_at timestamptz not null,
      device text not null,
      source text,
      referrer text,
      app_version text,
      environment text,
      anonymous_id text,
      first_page text not null,
      last_page text not null,
      event_count integer not null default 0,
      page_views integer not null default 0,
      signal_count integer not null default 0,
      conversions integer not null default 0,
      revenue double precision not null default 0,
      primary key (site_id, id)
    );
    create index sessions_started_idx on sessions (site_id, started_at desc);

    create table page_scores (
      site_id uuid not null,
      page text not null,
      window_start timestamptz not null,
      score real not null,
      friction real not null,
      sessions integer not null,
      page_views integer not null,
      signal_count integer not null,
      dominant_signal text,
      trend text not null default 'stable',
      updated_at timestamptz not null,
      primary key (site_id, page, window_start)
    );
    create index page_scores_latest_idx on page_scores (site_id, window_start desc);

    create table score_history (
      site_id uuid not null,
      page text not null,
      day date not null,
      score real not null,
      sessions integer not null,
      page_views integer not null,
      signal_count integer not null,
      dominant_signal text,
      updated_at timestamptz not null,
      primary key (site_id, page, day)
    );

    create table dead_letters (
      id bigserial primary key,
      stream text not null,
      subject text not null,
      stream_seq bigint not null,
      reason text not null,
      payload text not null,
      created_at timestamptz not null default now()
    );
  `;
  for (const statement of ddl
    .split(/;\s*\n/)
    .map((s) => s.trim())
    .filter(Boolean)) {
    await sql.raw(statement).execute(db);
  }

  const { rows } = await sql<{
    ok: boolean;
  }>`select exists (select 1 from pg_available_extensions where name = 'timescaledb') as ok`.execute(db);
  if (!rows[0]?.ok) return;
  await sql`create extension if not exists timescaledb`.execute(db);
  // Chunk sizes: a day of raw events per chunk keeps recent chunks in memory; scores are small, so weekly/monthly.
  await sql`select create_hypertable('events', 'ts', chunk_time_interval => interval '1 day', if_not_exists => true)`.execute(
    db,
  );
  await sql`select create_hypertable('signals', 'ts', chunk_time_interval => interval '1 day', if_not_exists => true)`.execute(
    db,
  );
  await sql`select create_hypertable('page_scores', 'window_start', chunk_time_interval => interval '7 days', if_not_exists => true)`.execute(
    db,
  );
  await sql`select create_hypertable('score_history', 'day', chunk_time_interval => interval '30 days', if_not_exists => true)`.execute(
    db,
  );
  // Raw rows are kept 90 days, hourly scores 90 days, daily history two years (the trend and deploy views look back that far).
  await sql`select add_retention_policy('events', interval '90 days', if_not_exists => true)`.execute(db);
  await sql`select add_retention_policy('signals', interval '90 days', if_not_exists => true)`.execute(db);
  await sql`select add_retention_policy('page_scores', interval '90 days', if_not_exists => true)`.execute(db);
  await sql`select add_retention_policy('score_history', interval '730 days', if_not_exists => true)`.execute(db);
  // Compress after 35 days: ingest refuses events older than 30 days, so compressed chunks never take inserts.
  await sql`alter table events set (timescaledb.compress, timescaledb.compress_segmentby = 'site_id', timescaledb.compress_orderby = 'ts desc')`.execute(
    db,
  );
  await sql`alter table signals set (timescaledb.compress, timescaledb.compress_segmentby = 'site_id', timescaledb.compress_orderby = 'ts desc')`.execute(
    db,
  );
  await sql`select add_compression_policy('events', interval '35 days', if_not_exists => true)`.execute(db);
  await sql`select add_compression_policy('signals', interval '35 days', if_not_exists => true)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of [
    'dead_letters',
    'score_history',
    'page_scores',
    'sessions',
    'signals',
    'events',
    'api_keys',
    'sites',
    'orgs',
  ]) {
    await db.schema.dropTable(t).ifExists().cascade().execute();
  }
}
