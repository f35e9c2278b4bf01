import { sql, type Kysely } from 'kysely';

/**
 * The journeys route's candidates (api/routes/journeys/journeys.queries.ts): the most recently active sessions that
 * stored a signal, newest first, a page at a time. Without an index on activity each page read every session of the
 * site and sorted them (717 ms a page at 10M demo events, 1M sessions); this partial index holds only sessions with
 * a signal, in the order the route reads them (10 ms for the first 1,000).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index if not exists journeys_recent_sessions_idx on sessions (site_id, last_seen_at desc, id)
    where signal_count > 0`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists journeys_recent_sessions_idx`.execute(db);
}
