import { ScoresAnswerCache } from '../../read-models/scores-answer-cache.ts';
import { round1 } from '../../../shared/domain/score-summary.ts';
import type { ReadDeps } from '../../http/deps.ts';
import type { RouteTable } from '../../http/routes.ts';
import { SiteReadQuerySchema } from '../../http/common.schema.ts';
import { ScoresResponseSchema, ShortScoresResponseSchema } from './scores.schema.ts';
import { activeIssueCountsByPage, listCurrentPageScores } from '../../read-models/scores.queries.ts';

/**
 * `GET /v1/query/scores`: the site's overall score and trend, and every page's current score; and its short form
 * `GET /v1/scores`: `{ scores: [ { page, score, trend, top_signal, issue_count, updated_at } ] }` (spec "Page score").
 * Both read one environment (`environment`, default production). The long form's encoded answer is kept in memory
 * (`cache`, one per route table: per process) and served again while it is exactly what would be computed.
 */
export function scoreRoutes(table: RouteTable, deps: ReadDeps, cache = new ScoresAnswerCache()): RouteTable {
  table.read({
    path: '/v1/query/scores',
    tag: 'scores',
    summary: "The site's overall score and trend, and each page's current score",
    query: SiteReadQuerySchema,
    response: ScoresResponseSchema,
    async handler(_ctx, { query }) {
      // The encoded answer, kept in this process while its version and clock interval hold (scores-answer-cache.ts).
      return (await cache.answer(deps.db, query.site_id, query.environment, deps.now())).body;
    },
  });
  table.read({
    path: '/v1/scores',
    tag: 'scores',
    summary: "Each page's current score with top_signal, issue_count and updated_at (short form)",
    query: SiteReadQuerySchema,
    response: ShortScoresResponseSchema,
    async handler(_ctx, { query }) {
      const [pages, issues] = await Promise.all([
        listCurrentPageScores(deps.db, query.site_id, query.environment, deps.now()),
        activeIssueCountsByPage(deps.db, query.site_id, query.environment),
      ]);
      return {
        scores: pages.map((p) => ({
          page: p.page,
          score: round1(p.score),
          trend: p.trend,
          top_signal: p.dominant_signal,
          issue_count: issues.get(p.page) ?? 0,
          updated_at: p.updated_at.toISOString(),
        })),
      };
    },
  });
  return table;
}
