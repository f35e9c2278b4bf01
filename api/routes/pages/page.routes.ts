import Router from '@koa/router';
import type Koa from 'koa';
import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { NotFoundError } from '../../../shared/errors.ts';
import { ok } from '../../../shared/http/envelope.ts';
import { round1 } from '../../../shared/domain/score-summary.ts';
import { siteQuery } from '../../http/auth.ts';
import { pageBudget } from './budget.ts';
import { recentDeploys } from '../deploys/deploys.queries.ts';
import { presentDeploy } from '../deploys/deploys.presenter.ts';
import { presentComparison, presentPage, presentTrends, type ComparedPage } from './page.presenter.ts';
import {
  activeAlertsOfPage,
  activeIssueCount,
  activeIssuesOfPage,
  budgetRules,
  currentPageScore,
  elementsOfPage,
  pageActivity,
  pageDailyScores,
  pageKnown,
  siteDailyScoresOver,
} from './page.queries.ts';
import { CompareQuerySchema, PageQuerySchema, TrendsQuerySchema } from './page.schema.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';

export interface PageDeps {
  db: Kysely<Database>;
  readAuth: Koa.Middleware;
  now?: () => Date;
}

/** Days of `score_history[]` on the page view; its recent deploys cover the same days. */
export const PAGE_HISTORY_DAYS = 30;
/** At most this many recent deploys on the page view, newest first. */
export const PAGE_DEPLOYS = 10;

/** `/query/page`: a page's score, history, issues, elements, budget, recent deploys and alerts; undefined for a page never scored. */
export async function pageView(
  db: Kysely<Database>,
  site_id: string,
  environment: Environment,
  page: string,
  at: Date,
) {
  if (!(await pageKnown(db, site_id, environment, page))) return undefined;
  const [score, history, issues, elements, rules, deploys, alerts] = await Promise.all([
    currentPageScore(db, site_id, environment, page),
    pageDailyScores(db, site_id, environment, page, PAGE_HISTORY_DAYS, at),
    activeIssuesOfPage(db, site_id, environment, page),
    elementsOfPage(db, site_id, environment, page),
    budgetRules(db, site_id),
    recentDeploys(db, site_id, environment, new Date(at.getTime() - PAGE_HISTORY_DAYS * 86_400_000), PAGE_DEPLOYS).then(
      ({ rows, related }) => rows.map((d) => presentDeploy(d, related)),
    ),
    // Alert rules watch production only (issue 15): a staging page has no alerts.
    environment === 'production' ? activeAlertsOfPage(db, site_id, page) : [],
  ]);
  const budget = pageBudget(rules, page, round1(score?.score ?? 0));
  return presentPage({ page, score, history, issues, elements, budget, deploys, alerts });
}

/**
 * `/query/page` (+ `/v1/page`), `/query/trends` (+ `/v1/trends`) and `/query/compare` (+ `/v1/compare`).
 * A page the site never scored (in the `environment` read, default production) is 404, like a resource of another site.
 */
export function pageRouter(deps: PageDeps): Router {
  const now = deps.now ?? (() => new Date());
  const router = new Router();

  const page: Koa.Middleware = async (ctx) => {
    const { site_id, page, environment } = siteQuery(ctx, PageQuerySchema);
    const view = await pageView(deps.db, site_id, environment, page, now());
    if (!view) throw new NotFoundError('page not found');
    ctx.body = ok(view);
  };

  const trends: Koa.Middleware = async (ctx) => {
    const q = siteQuery(ctx, TrendsQuerySchema);
    const at = now();
    if (q.page !== undefined && !(await pageKnown(deps.db, q.site_id, q.environment, q.page)))
      throw new NotFoundError('page not found');
    const history =
      q.page === undefined
        ? await siteDailyScoresOver(deps.db, q.site_id, q.environment, q.days, at)
        : await pageDailyScores(deps.db, q.site_id, q.environment, q.page, q.days, at);
    ctx.body = ok(presentTrends(q.page ?? null, q.days, history));
  };

  const compared = async (
    siteId: string,
    env: Environment,
    p: string,
    which: 'a' | 'b',
    at: Date,
  ): Promise<ComparedPage> => {
    if (!(await pageKnown(deps.db, siteId, env, p))) throw new NotFoundError(`page not found: ${which}`);
    const [score, activity, issues] = await Promise.all([
      currentPageScore(deps.db, siteId, env, p),
      pageActivity(deps.db, siteId, env, p, at),
      activeIssueCount(deps.db, siteId, env, p),
    ]);
    return { page: p, score, sessions: activity.sessions, signals: activity.signals, open_issues: issues };
  };
  const compare: Koa.Middleware = async (ctx) => {
    const q = siteQuery(ctx, CompareQuerySchema);
    const at = now();
    const [a, b] = await Promise.all([
      compared(q.site_id, q.environment, q.a, 'a', at),
      compared(q.site_id, q.environment, q.b, 'b', at),
    ]);
    ctx.body = ok(presentComparison(a, b));
  };

  router.get('/v1/query/page', deps.readAuth, page);
  router.get('/v1/page', deps.readAuth, page);
  router.get('/v1/query/trends', deps.readAuth, trends);
  router.get('/v1/trends', deps.readAuth, trends);
  router.get('/v1/query/compare', deps.readAuth, compare);
  router.get('/v1/compare', deps.readAuth, compare);
  return router;
}
