import { sql, type Kysely } from 'kysely';

/**
 * The insights route (api/routes/revenue/insights.queries.ts) read 30 days of `events` for its conversions and page
 * views and of `signals` for its confused sessions, and 1M sessions by activity: past the 120 s statement timeout at
 * 10M demo events (503). Its page views now come from `page_viewers` (migration 0222); these indexes serve the rest,
 * each an index-only scan of the rows the question names:
 * - `insights_conversions_idx`: conversion and custom events by time, with what the conversion tests and sums read
 *   (insights' converting sessions, and revenue's and recommendations' too: api/routes/revenue/revenue.queries.ts);
 * - `insights_confused_signals_idx`: signals by environment and time with their session and type;
 * - `insights_active_sessions_idx`: sessions by last activity with their source and environment.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Each build reads its whole table (10M events: a minute or more on a busy machine), longer than the pool's
  // per-statement timeout; lifted for this migration's transaction only.
  await sql`select set_config('statement_timeout', '0', true)`.execute(db);
  await sql`create index if not exists insights_conversions_idx on events (site_id, ts)
    include (session_id, type, name, environment, value) where type in ('conversion', 'custom')`.execute(db);
  await sql`create index if not exists insights_confused_signals_idx on signals (site_id, environment, ts)
    include (session_id, signal_type)`.execute(db);
  await sql`create index if not exists insights_active_sessions_idx on sessions (site_id, last_seen_at)
    include (id, source, environment)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists insights_conversions_idx`.execute(db);
  await sql`drop index if exists insights_confused_signals_idx`.execute(db);
  await sql`drop index if exists insights_active_sessions_idx`.execute(db);
}
