import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from './database.ts';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * How long TimescaleDB keeps `site_score_days` (and `score_history`) where it is installed: the retention policy of
 * migration 0350 (and 0001), which drops whole chunks older than this without any trigger.
 */
export const SITE_SCORE_DAYS_RETENTION_DAYS = 730;

/** One day of one site and environment whose `site_score_days` row must follow `score_history`. */
export interface SiteScoreDay {
  siteId: string;
  environment: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
}

/**
 * Recomputes the `site_score_days` rows of these days from `score_history` (migration 0350): the sum of
 * `score * sessions` and of `sessions` over the day's pages with sessions, the very aggregate the readers computed
 * from `score_history` before, so their answers stay the same doubles. Run in the transaction that wrote
 * `score_history`, after the write. The rows are first locked in key order (created when missing), then summed in a
 * second statement: under READ COMMITTED that statement's snapshot sees every transaction that held a lock before, so
 * concurrent writers of one site's day (processor partitions) never leave a sum that misses a committed page.
 */
export async function refreshSiteScoreDays(db: Db, days: readonly SiteScoreDay[]): Promise<void> {
  if (days.length === 0) return;
  const keys = sql`(select distinct site_id, environment, day from unnest(
    ${days.map((d) => d.siteId)}::uuid[], ${days.map((d) => d.environment)}::text[], ${days.map((d) => d.day)}::date[]
  ) as k(site_id, environment, day))`;
  await sql`
    insert into site_score_days (site_id, environment, day, weighted_sum, sessions)
    select site_id, environment, day, 0, 0 from ${keys} k order by site_id, environment, day
    on conflict (site_id, environment, day) do update set sessions = site_score_days.sessions`.execute(db);
  // A day whose pages all lost their sessions keeps a row with 0 sessions: the readers skip it, as they skipped the day.
  await sql`
    update site_score_days d set weighted_sum = a.weighted_sum, sessions = a.sessions
    from (
      select k.site_id, k.environment, k.day,
             coalesce(sum(h.score * h.sessions), 0) as weighted_sum, coalesce(sum(h.sessions), 0) as sessions
      from ${keys} k
      left join score_history h on h.site_id = k.site_id and h.environment = k.environment and h.day = k.day and h.sessions > 0
      group by k.site_id, k.environment, k.day
    ) a
    where d.site_id = a.site_id and d.environment = a.environment and d.day = a.day`.execute(db);
}

/**
 * The site's daily scores from `fromDay` (and before `beforeDay`), oldest first: `weighted_sum / sessions`, a double
 * divided by a bigint as `sum(score * sessions) / sum(sessions)` over `score_history` was. Days with no sessions are
 * left out, as the raw aggregate (over pages with sessions only) had no row for them.
 */
export async function siteDayScores(
  db: Db,
  siteId: string,
  environment: string,
  fromDay: string,
  beforeDay?: string,
): Promise<{ date: string; score: number }[]> {
  const { rows } = await sql<{ date: string; score: number }>`
    select to_char(day, 'YYYY-MM-DD') as date, (weighted_sum / sessions)::float8 as score
    from site_score_days
    where site_id = ${siteId} and environment = ${environment} and day >= ${fromDay}::date
      ${beforeDay === undefined ? sql`` : sql`and day < ${beforeDay}::date`} and sessions > 0
    order by day`.execute(db);
  return rows;
}

/** Every (site, environment, day) of `score_history`: what a rebuild refreshes. */
export async function storedScoreDays(db: Db): Promise<SiteScoreDay[]> {
  return db
    .selectFrom('score_history')
    .select(['site_id as siteId', 'environment', sql<string>`to_char(day, 'YYYY-MM-DD')`.as('day')])
    .distinct()
    .execute();
}
