import Router from '@koa/router';
import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { ok, parseInput } from '../../../shared/http/envelope.ts';
import { baselineScore, overallScore, round1, scoreTrend } from '../../../shared/domain/score-summary.ts';
import type { AuthState } from '../../http/auth.ts';
import { requireSite } from '../../http/auth.ts';
import { SiteQuerySchema } from './scores.schema.ts';
import { listCurrentPageScores, siteDailyScores } from './scores.queries.ts';
import type Koa from 'koa';

export interface ScoresDeps {
  db: Kysely<Database>;
  readAuth: Koa.Middleware;
  now?: () => Date;
}

/** `GET /v1/query/scores`: the site's overall score and trend, and every page's current score. */
export function scoresRouter(deps: ScoresDeps): Router {
  const now = deps.now ?? (() => new Date());
  const router = new Router();
  router.get('/v1/query/scores', deps.readAuth, async (ctx) => {
    const { site_id } = parseInput(SiteQuerySchema, ctx.query, 'query');
    requireSite((ctx.state as AuthState).principal, site_id);
    const at = now();
    const [pages, history] = await Promise.all([listCurrentPageScores(deps.db, site_id, at), siteDailyScores(deps.db, site_id, at)]);
    const baseline = baselineScore(history, at.toISOString().slice(0, 10));
    const overall = overallScore(pages);
    const site = {
      site_id,
      overall_score: overall,
      overall_trend: scoreTrend(overall, baseline),
      pages: pages.map((p) => ({ page: p.page, score: round1(p.score), trend: p.trend, dominant_signal: p.dominant_signal })),
    };
    // The spec names the payload "a site object": it is served both as `data` itself and as `data.site`.
    ctx.body = ok({ ...site, site });
  });
  return router;
}
