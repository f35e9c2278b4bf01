import { sql, type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { ACTIVE_STATUSES } from '../../shared/domain/issue-status.ts';
import type { Environment } from '../../shared/domain/deploy-verification.ts';
import { siteDayScores } from '../../shared/db/site-score-days.ts';

export interface CurrentPageScore {
  page: string;
  score: number;
  trend: string;
  dominant_signal: string | null;
  sessions: number;
  updated_at: Date;
}

/** How far back a page's current row may start and still count as the page's current score: 7 days. */
export const CURRENT_SCORE_WINDOW_MS = 7 * 24 * 3600 * 1000;

/**
 * The latest row of each page of one environment scored in the 7 days before `now` (a subquery): the page's row of
 * `page_current_scores` (its latest `page_scores` row, kept by a trigger, migration 0360) when that row is in the
 * window, which it is exactly when any of the page's rows is.
 */
const latestPageScores = (siteId: string, environment: Environment, now: Date) => sql`(
  select page, score::float8 as score, trend, dominant_signal, sessions, updated_at
  from page_current_scores
  where site_id = ${siteId} and environment = ${environment} and window_start >= ${new Date(now.getTime() - CURRENT_SCORE_WINDOW_MS)}
) latest`;

/** Pages of one environment seen in the last 7 days, each with its latest hourly score, highest score first. */
export async function listCurrentPageScores(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  now: Date,
): Promise<CurrentPageScore[]> {
  const { rows } = await sql<CurrentPageScore>`
    select * from ${latestPageScores(siteId, environment, now)} order by score desc, page asc`.execute(db);
  return rows;
}

export type PageScoreSummary = Omit<CurrentPageScore, 'updated_at'>;

/**
 * listCurrentPageScores without `updated_at`, as one JSON array the database builds: the scores route answers every
 * page of the site (2,000 at 10M demo events) on every call, and a row per page cost the API 6.5 ms of CPU to parse
 * (half of it the timestamps it does not serve) against 1.7 ms for the one JSON text. The numbers are the same
 * doubles: PostgreSQL writes a float8 in JSON with the shortest digits that read back exactly, as it sends it in a row.
 */
export async function pageScoreSummaries(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  now: Date,
): Promise<PageScoreSummary[]> {
  const { rows } = await sql<{ pages: string | null }>`
    select json_agg(json_build_array(page, score, trend, dominant_signal, sessions) order by score desc, page asc)::text as pages
    from ${latestPageScores(siteId, environment, now)}`.execute(db);
  const pages = JSON.parse(rows[0]?.pages ?? '[]') as [string, number, string, string | null, number][];
  return pages.map(([page, score, trend, dominant_signal, sessions]) => ({
    page,
    score,
    trend,
    dominant_signal,
    sessions,
  }));
}

/**
 * The site's daily scores (traffic-weighted over its pages) for the 7 days before `now`'s day: the trend baseline's
 * input, oldest first. One `site_score_days` row a day (its sums over `score_history`, migration 0350).
 */
export async function siteDailyScores(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  now: Date,
): Promise<{ date: string; score: number }[]> {
  const today = now.toISOString().slice(0, 10);
  const weekBefore = new Date(Date.parse(today) - 7 * 86_400_000).toISOString().slice(0, 10);
  return siteDayScores(db, siteId, environment, weekBefore, today);
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
