import { sql, type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { ACTIVE_STATUSES } from '../../shared/domain/issue-status.ts';
import type { Environment } from '../../shared/domain/deploy-verification.ts';

export interface CurrentPageScore {
  page: string;
  score: number;
  trend: string;
  dominant_signal: string | null;
  sessions: number;
  updated_at: Date;
}

/** Pages of one environment seen in the last 7 days, each with its latest hourly score, highest score first. */
export async function listCurrentPageScores(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  now: Date,
): Promise<CurrentPageScore[]> {
  const since = new Date(now.getTime() - 7 * 24 * 3600 * 1000);
  const { rows } = await sql<CurrentPageScore>`
    select * from (
      select distinct on (page) page, score::float8 as score, trend, dominant_signal, sessions, updated_at
      from page_scores
      where site_id = ${siteId} and environment = ${environment} and window_start >= ${since}
      order by page, window_start desc
    ) latest
    order by score desc, page asc`.execute(db);
  return rows;
}

/** The site's daily scores (traffic-weighted over its pages) for the 7 days before `now`'s day: the trend baseline's input. */
export async function siteDailyScores(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  now: Date,
): Promise<{ date: string; score: number }[]> {
  const today = now.toISOString().slice(0, 10);
  const { rows } = await sql<{ date: string; score: number }>`
    select to_char(day, 'YYYY-MM-DD') as date,
           (sum(score * sessions) / nullif(sum(sessions), 0))::float8 as score
    from score_history
    where site_id = ${siteId} and environment = ${environment} and day < ${today}::date and day >= ${today}::date - 7 and sessions > 0
    group by day`.execute(db);
  return rows.filter((r) => r.score !== null);
}

/** Active issues (open, triaged, in progress, regressed) per page of the site. */
export async function activeIssueCountsByPage(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('ux_issues')
    .select(['page', (eb) => eb.fn.countAll<number>().as('n')])
    .where('site_id', '=', siteId)
    .where('environment', '=', environment)
    .where('status', 'in', [...ACTIVE_STATUSES])
    .groupBy('page')
    .execute();
  return new Map(rows.map((r) => [r.page, Number(r.n)]));
}
