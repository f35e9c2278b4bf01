import Router from '@koa/router';
import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { ok } from '../../../shared/http/envelope.ts';
import { baselineScore, overallScore, round1, scoreTrend } from '../../../shared/domain/score-summary.ts';
import { siteQuery } from '../../http/auth.ts';
import { SiteQuerySchema } from './scores.schema.ts';
import { activeIssueCountsByPage, listCurrentPageScores, siteDailyScores } from './scores.queries.ts';
import type Koa from 'koa';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';

/** The site object of `/query/scores`: overall score and trend against the 7-day baseline, every page worst first. */
export async function siteScores(db: Kysely<Database>, site_id: string, environment: Environment, at: Date) {
  const [pages, history] = await Promise.all([
    listCurrentPageScores(db, site_id, environment, at),
    siteDailyScores(db, site_id, environment, at),
  ]);
  const baseline = baselineScore(history, at.toISOString().slice(0, 10));
  const overall = overallScore(pages);
  return {
    site_id,
    overall_score: overall,
    overall_trend: scoreTrend(overall, baseline),
    pages: pages.map((p) => ({
      page: p.page,
      score: round1(p.score),
      trend: p.trend as 'up' | 'down' | 'stable',
      dominant_signal: p.dominant_signal,
    })),
  };
}

export interface ScoresDeps {
  db: Kysely<Database>;
  readAuth: Koa.Middleware;
  now?: () => Date;
}

/**
 * `GET /v1/query/scores`: the site's overall score and trend, and every page's current score; and its short form
 * `GET /v1/scores`: `{ scores: [ { page, score, trend, top_signal, issue_count, updated_at } ] }` (spec "Page score").
 * Both read one environment (`environment`, default production).
 */
export function scoresRouter(deps: ScoresDeps): Router {
  const now = deps.now ?? (() => new Date());
  const router = new Router();
  router.get('/v1/query/scores', deps.readAuth, async (ctx) => {
    const { site_id, environment } = siteQuery(ctx, SiteQuerySchema);
    const site = await siteScores(deps.db, site_id, environment, now());
    // The spec names the payload "a site object": it is served both as `data` itself and as `data.site`.
    ctx.body = ok({ ...site, site });
  });
  router.get('/v1/scores', deps.readAuth, async (ctx) => {
    const { site_id, environment } = siteQuery(ctx, SiteQuerySchema);
    const [pages, issues] = await Promise.all([
      listCurrentPageScores(deps.db, site_id, environment, now()),
      activeIssueCountsByPage(deps.db, site_id, environment),
    ]);
    ctx.body = ok({
      scores: pages.map((p) => ({
        page: p.page,
        score: round1(p.score),
        trend: p.trend,
        top_signal: p.dominant_signal,
        issue_count: issues.get(p.page) ?? 0,
        updated_at: p.updated_at.toISOString(),
      })),
    });
  });
  return router;
}
