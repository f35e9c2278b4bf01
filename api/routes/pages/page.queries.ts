import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { onPage, type PageScope } from '../../../shared/db/scope.ts';
import { ACTIVE_STATUSES } from '../../../shared/domain/issue-status.ts';
import { pageElementsText } from '../../read-models/elements.queries.ts';
import { issuesOfPageText } from '../../read-models/issues.queries.ts';
import { recentDeploysDocument, type DeploysDocument } from '../../read-models/deploys.queries.ts';
import { isoMs } from '../../../shared/db/sql.ts';
import { PREPARED } from '../../../shared/db/prepared-reads.ts';
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

/** What the page view reads, the page's issues, elements, recent deploys and alerts as the database built them. */
export interface PageRead {
  known: boolean;
  score: PageScoreNow | undefined;
  history: { date: string; score: number }[];
  rules: BudgetRule[];
  /** The issues as the JSON text of their presented forms (issuesOfPageText). */
  issues: string;
  /** The elements as the JSON text of their presented forms (pageElementsText). */
  elements: string;
  deploys: DeploysDocument;
  alerts: AlertRow[];
}

/** Which recent deploys the page view shows: those of its environment since `since`, newest first, at most `limit`. */
export interface RecentDeploys {
  since: Date;
  limit: number;
}

/**
 * Everything the page view reads, in one statement instead of ten round trips (one statement is one snapshot, so no
 * transaction either): whether the page is known (pageKnown), its current score (currentPageScore, undefined for a
 * known page without a current window), its daily scores over `days` (pageDailyScores), the site's budget rules, and,
 * for a known page only, its active issues (most severe first, at most 100), its elements (the elements route's
 * order, at most 50), the environment's recent deploys with their related data (deploysDocument) and, in production
 * (alert rules watch production only, issue 15), its alerts that are not resolved. The lists come as JSON that the
 * database builds and JSON.parse reads natively (the driver parsing each field of each row was most of the route's
 * CPU in the API), with their times as ISO text; the issues and the elements (most of the answer's bytes) as the text
 * of their presented forms, which the route sends without parsing them. An unknown page reads none of the lists: `case` evaluates a
 * subquery only when its condition holds.
 */
export async function pageRead(
  db: Kysely<Database>,
  scope: PageScope,
  days: number,
  now: Date,
  deploys: RecentDeploys,
): Promise<PageRead> {
  const { site_id: siteId, environment, page } = scope;
  const alerts =
    environment === 'production'
      ? sql<AlertJson[]>`case when k.known then ${alertsOfPageJson(db, siteId, page)} end`
      : sql`'[]'::json`;
  const { rows } = await sql<
    Omit<PageRead, 'score' | 'alerts' | 'issues' | 'elements'> & {
      alerts: AlertJson[];
      issues: string | null;
      elements: string | null;
    } & {
      [K in keyof PageScoreNow]: PageScoreNow[K] | null;
    }
  >`${PREPARED}
    select k.known, s.*,
      (select coalesce(json_agg(h order by h.date), '[]') from (${pageDailyScoresQuery(siteId, environment, page, days, now)}) h) as history,
      (select coalesce(json_agg(r), '[]') from (${budgetRulesQuery(db, siteId)}) r) as rules,
      case when k.known then ${issuesOfPageText(db, scope, [...ACTIVE_STATUSES], PAGE_ISSUES)} end as issues,
      case when k.known then ${pageElementsText(db, { site_id: siteId, environment, page, limit: PAGE_ELEMENTS })} end as elements,
      case when k.known then ${recentDeploysDocument(siteId, environment, deploys.since, deploys.limit)} end as deploys,
      ${alerts} as alerts
    from (select ${knownExpression(siteId, environment, page)} as known) k
    left join lateral (${currentPageScoreQuery(db, siteId, environment, page)}) s on true`.execute(db);
  const { known, history, rules, issues, elements, deploys: document, alerts: alertRows, ...score } = rows[0];
  return {
    known,
    score: score.updated_at === null ? undefined : (score as PageScoreNow),
    history,
    rules,
    issues: issues ?? '[]',
    elements: elements ?? '[]',
    deploys: document,
    alerts: (alertRows ?? []).map(alertRow),
  };
}

/** At most this many of the page's active issues on the page view, most severe first. */
export const PAGE_ISSUES = 100;
/** At most this many of the page's elements on the page view. */
export const PAGE_ELEMENTS = 50;

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

/** An alert of the page as alertsOfPageJson sends it: its times as ISO text. */
type AlertJson = Omit<AlertRow, AlertTime> & { [K in AlertTime]: null extends AlertRow[K] ? string | null : string };
type AlertTime = 'triggered_at' | 'acknowledged_at' | 'resolved_at' | 'created_at' | 'updated_at';

/** Alerts on the page that are not resolved yet (fired, acknowledged, investigating), newest first, at most 50, as JSON. */
const alertsOfPageJson = (db: Kysely<Database>, siteId: string, page: string) => {
  const rows = db
    .selectFrom('alerts')
    .selectAll()
    .where('site_id', '=', siteId)
    .where('page', '=', page)
    .where('status', '!=', 'resolved')
    .orderBy('triggered_at', 'desc')
    .limit(50);
  return sql<AlertJson[]>`(select coalesce(json_agg(json_build_object('id', a.id, 'site_id', a.site_id,
      'rule_id', a.rule_id, 'rule_name', a.rule_name, 'page', a.page, 'trigger_type', a.trigger_type,
      'score_before', a.score_before, 'score_after', a.score_after, 'status', a.status, 'details', a.details,
      'triggered_at', ${isoMs(sql.ref<Date>('a.triggered_at'))}, 'acknowledged_at', ${isoMs<null>(sql.ref<Date | null>('a.acknowledged_at'))},
      'resolved_at', ${isoMs<null>(sql.ref<Date | null>('a.resolved_at'))}, 'resolved_reason', a.resolved_reason,
      'created_at', ${isoMs(sql.ref<Date>('a.created_at'))}, 'updated_at', ${isoMs(sql.ref<Date>('a.updated_at'))})
    order by a.triggered_at desc), '[]') from (${rows}) a)`;
};

/** An alert row from its JSON form (presentAlert reads Dates; a page has few unresolved alerts). */
const alertRow = (a: AlertJson): AlertRow => ({
  ...a,
  triggered_at: new Date(a.triggered_at),
  acknowledged_at: a.acknowledged_at === null ? null : new Date(a.acknowledged_at),
  resolved_at: a.resolved_at === null ? null : new Date(a.resolved_at),
  created_at: new Date(a.created_at),
  updated_at: new Date(a.updated_at),
});

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
