import type { Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { baselineScore, overallScore, round1, scoreTrend } from '../../shared/domain/score-summary.ts';
import { pageScoreSummaries, siteDailyScores } from './scores.queries.ts';
import type { Environment } from '../../shared/domain/deploy-verification.ts';

/** The site object of `/query/scores`: overall score and trend against the 7-day baseline, every page worst first. */
export async function siteScores(db: Kysely<Database>, site_id: string, environment: Environment, at: Date) {
  const [pages, history] = await Promise.all([
    pageScoreSummaries(db, site_id, environment, at),
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
