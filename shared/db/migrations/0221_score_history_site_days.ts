import { sql, type Kysely } from 'kysely';

/**
 * The site's daily score (its pages' daily scores weighted by their sessions) over a window of days: the scores
 * route's 7-day baseline, the page and trends routes' site line. `score_history`'s key leads with the page, so those
 * reads scanned the whole table (every page's 30+ days: 61k rows at 10M demo events, 105 ms); this index gives them
 * the site's days in order, with the two columns they sum, read from the index alone.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index if not exists score_history_site_days_idx on score_history (site_id, environment, day) include (score, sessions)`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists score_history_site_days_idx`.execute(db);
}
