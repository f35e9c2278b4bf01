import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { Database } from '../../../shared/db/database.ts';
import { NotFoundError } from '../../../shared/errors.ts';
import { round1 } from '../../../shared/domain/score-summary.ts';
import type { ReadDeps } from '../../http/deps.ts';
import type { RouteTable } from '../../http/routes.ts';
import { pageBudget } from './budget.ts';
import { fromDocument } from '../../read-models/deploys.queries.ts';
import { presentDeploy } from '../../read-models/deploys.presenter.ts';
import { pageAnswer, presentComparison, presentTrends, type ComparedPage } from './page.presenter.ts';
import type { JsonText } from '../../../shared/http/envelope.ts';
import {
  activeIssueCount,
  currentPageScore,
  pageRead,
  pageActivity,
  pageDailyScores,
  pageKnown,
  siteDailyScoresOver,
} from './page.queries.ts';
import {
  CompareQuerySchema,
  CompareResponseSchema,
  PageQuerySchema,
  PageResponseSchema,
  TrendsQuerySchema,
  TrendsResponseSchema,
} from './page.schema.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';

/** Days of `score_history[]` on the page view; its recent deploys cover the same days. */
export const PAGE_HISTORY_DAYS = 30;
/** At most this many recent deploys on the page view, newest first. */
export const PAGE_DEPLOYS = 10;

/**
 * `/query/page`: a page's score, history, issues, elements, budget, recent deploys and alerts, as the JSON text of its
 * answer (pageAnswer: the issues and elements as the database wrote them); undefined for a page never scored.
 */
export async function pageViewText(
  db: Kysely<Database>,
  site_id: string,
  environment: Environment,
  page: string,
  at: Date,
): Promise<JsonText | undefined> {
  const { known, score, history, rules, issues, elements, deploys, alerts } = await pageRead(
    db,
    { site_id, environment, page },
    PAGE_HISTORY_DAYS,
    at,
    { since: new Date(at.getTime() - PAGE_HISTORY_DAYS * 86_400_000), limit: PAGE_DEPLOYS },
  );
  if (!known) return undefined;
  const recent = fromDocument(deploys);
  const budget = pageBudget(rules, page, round1(score?.score ?? 0));
  return pageAnswer({
    page,
    score,
    history,
    issues,
    elements,
    budget,
    deploys: recent.rows.map((d) => presentDeploy(d, recent.related)),
    alerts,
  });
}

/** The page view as values (the MCP tool reads its fields): pageViewText's answer, parsed. */
export async function pageView(
  db: Kysely<Database>,
  site_id: string,
  environment: Environment,
  page: string,
  at: Date,
): Promise<z.output<typeof PageResponseSchema> | undefined> {
  const answer = await pageViewText(db, site_id, environment, page, at);
  return answer === undefined ? undefined : (JSON.parse(answer.text) as z.output<typeof PageResponseSchema>);
}

/** `/query/trends`: the daily scores of a page, or of the site without `page`; a page never scored is 404. */
async function trendsView(db: Kysely<Database>, q: z.infer<typeof TrendsQuerySchema>, at: Date) {
  if (q.page !== undefined && !(await pageKnown(db, q.site_id, q.environment, q.page)))
    throw new NotFoundError('page not found');
  const history =
    q.page === undefined
      ? await siteDailyScoresOver(db, q.site_id, q.environment, q.days, at)
      : await pageDailyScores(db, q.site_id, q.environment, q.page, q.days, at);
  return presentTrends(q.page ?? null, q.days, history);
}

/** `/query/compare`: pages `a` and `b` side by side. */
async function comparisonView(db: Kysely<Database>, q: z.infer<typeof CompareQuerySchema>, at: Date) {
  const [a, b] = await Promise.all([
    compared(db, q.site_id, q.environment, q.a, 'a', at),
    compared(db, q.site_id, q.environment, q.b, 'b', at),
  ]);
  return presentComparison(a, b);
}

/** One side of `/query/compare`: a page the site never scored is 404 naming the side. */
async function compared(
  db: Kysely<Database>,
  siteId: string,
  env: Environment,
  p: string,
  which: 'a' | 'b',
  at: Date,
): Promise<ComparedPage> {
  if (!(await pageKnown(db, siteId, env, p))) throw new NotFoundError(`page not found: ${which}`);
  const [score, activity, issues] = await Promise.all([
    currentPageScore(db, siteId, env, p),
    pageActivity(db, siteId, env, p, at),
    activeIssueCount(db, siteId, env, p),
  ]);
  return { page: p, score, sessions: activity.sessions, signals: activity.signals, open_issues: issues };
}

/**
 * `/query/page` (+ `/v1/page`), `/query/trends` (+ `/v1/trends`) and `/query/compare` (+ `/v1/compare`).
 * A page the site never scored (in the `environment` read, default production) is 404, like a resource of another site.
 */
export function pageRoutes(table: RouteTable, deps: ReadDeps): RouteTable {
  table.read({
    path: '/v1/query/page',
    shortForm: 'One page (short form; the same shape)',
    tag: 'pages',
    summary:
      'One page: score, trend, 30 days of score_history, open issues, elements, budget, recent deploys, active alerts',
    description: '404 when the site never scored the page.',
    query: PageQuerySchema,
    notFound: 'page not found',
    response: PageResponseSchema,
    handler: (_ctx, { query }) => pageViewText(deps.db, query.site_id, query.environment, query.page, deps.now()),
  });
  table.read({
    path: '/v1/query/trends',
    shortForm: 'Daily scores (short form; the same shape)',
    tag: 'pages',
    summary: 'Daily scores of a page, or of the site when page is omitted, over the last days (1-90, default 7)',
    description:
      "The array is sent twice, as history and as data (the short form's name). Days without traffic are absent.",
    query: TrendsQuerySchema,
    response: TrendsResponseSchema,
    handler: (_ctx, { query }) => trendsView(deps.db, query, deps.now()),
  });
  return table.read({
    path: '/v1/query/compare',
    shortForm: 'Two pages side by side (short form; the same shape)',
    tag: 'pages',
    summary:
      'Two pages side by side (score, trend, dominant signal, sessions, signals by type, open issues) and their difference b - a',
    query: CompareQuerySchema,
    response: CompareResponseSchema,
    handler: (_ctx, { query }) => comparisonView(deps.db, query, deps.now()),
  });
}
