import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { onPage, type PageScope } from '../../../shared/db/scope.ts';
import { ACTIVE_STATUSES } from '../../../shared/domain/issue-status.ts';
import { pageOfElements } from '../../read-models/elements.queries.ts';
import { listIssuesOfPage } from '../../read-models/issues.queries.ts';
import type { AlertRow } from '../../read-models/alerts.presenter.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import { siteDayScores } from '../../../shared/db/site-score-days.ts';

const DAY_MS = 86_400_000;

export interface PageScoreNow {
  score: number;
  trend: string;
  dominant_signal: string | null;
  sessions: number;
  page_views: number;
  signal_count: number;
  updated_at: Date;
}

/** The page's latest hourly score row (its current score), or undefined when the page was never scored. */
export async function currentPageScore(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  page: string,
): Promise<PageScoreNow | undefined> {
  return currentPageScoreQuery(db, siteId, environment, page).executeTakeFirst();
}

const currentPageScoreQuery = (db: Kysely<Database>, siteId: string, environment: Environment, page: string) =>
  db
    .selectFrom('page_scores')
    .select([
      sql<number>`score::float8`.as('score'),
      'trend',
      'dominant_signal',
      'sessions',
      'page_views',
      'signal_count',
      'updated_at',
    ])
    .where(onPage({ site_id: siteId, environment, page }))
    .orderBy('window_start', 'desc')
    .limit(1);

/** First day (YYYY-MM-DD, UTC) of a `days`-day window ending today. */
export const windowStartDay = (now: Date, days: number): string =>
  new Date(now.getTime() - (days - 1) * DAY_MS).toISOString().slice(0, 10);

/** The page's daily scores over the `days` days ending today, oldest first; days without traffic are absent. */
export async function pageDailyScores(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  page: string,
  days: number,
  now: Date,
): Promise<{ date: string; score: number }[]> {
  const { rows } = await sql<{
    date: string;
    score: number;
  }>`${pageDailyScoresQuery(siteId, environment, page, days, now)}`.execute(db);
  return rows;
}

const pageDailyScoresQuery = (siteId: string, environment: Environment, page: string, days: number, now: Date) => sql`
    select to_char(day, 'YYYY-MM-DD') as date, score::float8 as score
    from score_history
    where site_id = ${siteId} and environment = ${environment} and page = ${page} and day >= ${windowStartDay(now, days)}::date
    order by day`;

/** The site's daily scores (page scores weighted by their sessions) over the `days` days ending today, oldest first. */
export async function siteDailyScoresOver(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  days: number,
  now: Date,
): Promise<{ date: string; score: number }[]> {
  return siteDayScores(db, siteId, environment, windowStartDay(now, days));
}

const knownExpression = (siteId: string, environment: Environment, page: string) => sql<boolean>`
  exists (select 1 from page_scores where site_id = ${siteId} and environment = ${environment} and page = ${page})
  or exists (select 1 from score_history where site_id = ${siteId} and environment = ${environment} and page = ${page})`;

/** Whether the site has ever scored `page` in the environment (a current score or a daily one). */
export async function pageKnown(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  page: string,
): Promise<boolean> {
  const { rows } = await sql<{ known: boolean }>`select ${knownExpression(siteId, environment, page)} as known`.execute(
    db,
  );
  return rows[0]?.known === true;
}

export interface PageHead {
  known: boolean;
  score: PageScoreNow | undefined;
  history: { date: string; score: number }[];
  rules: BudgetRule[];
}

/**
 * What the page view needs first, in one statement instead of four round trips: whether the page is known
 * (pageKnown), its current score (currentPageScore, undefined for a known page without a current window), its daily
 * scores over `days` (pageDailyScores) and the site's budget rules (budgetRules), the last two as JSON arrays.
 */
export async function pageHead(
  db: Kysely<Database>,
  { site_id: siteId, environment, page }: PageScope,
  days: number,
  now: Date,
): Promise<PageHead> {
  const { rows } = await sql<
    { known: boolean; history: PageHead['history']; rules: BudgetRule[] } & {
      [K in keyof PageScoreNow]: PageScoreNow[K] | null;
    }
  >`
    select k.known, s.*,
      (select coalesce(json_agg(h order by h.date), '[]') from (${pageDailyScoresQuery(siteId, environment, page, days, now)}) h) as history,
      (select coalesce(json_agg(r), '[]') from (${budgetRulesQuery(db, siteId)}) r) as rules
    from (select ${knownExpression(siteId, environment, page)} as known) k
    left join lateral (${currentPageScoreQuery(db, siteId, environment, page)}) s on true`.execute(db);
  const { known, history, rules, ...score } = rows[0];
  return { known, score: score.updated_at === null ? undefined : (score as PageScoreNow), history, rules };
}

/** Active (open, triaged, in progress, regressed) issues of the page, most severe first. */
export async function activeIssuesOfPage(db: Kysely<Database>, siteId: string, environment: Environment, page: string) {
  return listIssuesOfPage(db, { site_id: siteId, environment, page }, [...ACTIVE_STATUSES], 100);
}

/** How many active issues the page has. */
export async function activeIssueCount(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  page: string,
): Promise<number> {
  const r = await db
    .selectFrom('ux_issues')
    .select(sql<number>`count(*)::int`.as('n'))
    .where(onPage({ site_id: siteId, environment, page }))
    .where('status', 'in', [...ACTIVE_STATUSES])
    .executeTakeFirstOrThrow();
  return r.n;
}

/** The page's elements, most friction signals first (the elements route's order). */
export async function elementsOfPage(db: Kysely<Database>, siteId: string, environment: Environment, page: string) {
  // The page view shows no total: the rows alone, one statement, no snapshot transaction around a count.
  return pageOfElements(db, { site_id: siteId, environment, page, limit: 50, offset: 0 }).execute();
}

export interface BudgetRule {
  threshold: number;
  page_pattern: string | null;
}

/** Enabled budget rules of the site: the page's budget comes from those whose pattern matches it. */
const budgetRulesQuery = (db: Kysely<Database>, siteId: string) =>
  db
    .selectFrom('alert_rules')
    .select(['threshold', 'page_pattern'])
    .where('site_id', '=', siteId)
    .where('trigger_type', '=', 'budget')
    .where('enabled', '=', true);

/** Alerts on the page that are not resolved yet (fired, acknowledged, investigating), newest first. */
export async function activeAlertsOfPage(db: Kysely<Database>, siteId: string, page: string): Promise<AlertRow[]> {
  return db
    .selectFrom('alerts')
    .selectAll()
    .where('site_id', '=', siteId)
    .where('page', '=', page)
    .where('status', '!=', 'resolved')
    .orderBy('triggered_at', 'desc')
    .limit(50)
    .execute();
}

/** Sessions that viewed the page in the last 7 days, and its friction signals by type over the same days. */
export async function pageActivity(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  page: string,
  now: Date,
): Promise<{ sessions: number; signals: Record<string, number> }> {
  const since = new Date(now.getTime() - 7 * DAY_MS);
  const [views, signals] = await Promise.all([
    // A session viewed the page since `since` exactly when its last view of it is since then (page_viewers, kept by the
    // processor with the events: migration 0222), counted from page_viewers_recent_idx instead of 7 days of events.
    db
      .selectFrom('page_viewers')
      .select(sql<number>`count(*)::int`.as('n'))
      .where(onPage({ site_id: siteId, environment, page }))
      .where('last_view_at', '>=', since)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('signals')
      .select(['signal_type', sql<number>`count(*)::int`.as('n')])
      .where(onPage({ site_id: siteId, environment, page }))
      .where('ts', '>=', since)
      .groupBy('signal_type')
      .execute(),
  ]);
  return { sessions: views.n, signals: Object.fromEntries(signals.map((s) => [s.signal_type, s.n])) };
}
