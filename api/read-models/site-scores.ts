import type { Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { baselineScore, overallScore, round1, scoreTrend, weightedScore } from '../../shared/domain/score-summary.ts';
import { pageScoreSummaries, pageScoresJson, siteDailyScores } from './scores.queries.ts';
import type { Environment } from '../../shared/domain/deploy-verification.ts';
import { JsonText } from '../../shared/http/json-text.ts';

/** The site object of `/query/scores`: overall score and trend against the 7-day baseline, every page worst first. */
export async function siteScores(db: Kysely<Database>, site_id: string, environment: Environment, at: Date) {
  const [pages, baseline] = await Promise.all([
    pageScoreSummaries(db, site_id, environment, at),
    siteBaseline(db, site_id, environment, at),
  ]);
  return siteObject(
    site_id,
    overallScore(pages),
    baseline,
    pages.map((p) => ({
      page: p.page,
      score: round1(p.score),
      trend: p.trend as 'up' | 'down' | 'stable',
      dominant_signal: p.dominant_signal,
    })),
  );
}

/**
 * siteScores with its pages as the JSON text the database wrote (pageScoresJson): what the scores route answers,
 * serialized to the same bytes without building 2,000 page objects. siteScores stays for readers of the pages.
 */
export async function siteScoresAnswer(db: Kysely<Database>, site_id: string, environment: Environment, at: Date) {
  const [pages, baseline] = await Promise.all([
    pageScoresJson(db, site_id, environment, at),
    siteBaseline(db, site_id, environment, at),
  ]);
  return siteObject(site_id, weightedScore(pages.weighted, pages.sessions), baseline, new JsonText(pages.json));
}

async function siteBaseline(db: Kysely<Database>, site_id: string, environment: Environment, at: Date) {
  return baselineScore(await siteDailyScores(db, site_id, environment, at), at.toISOString().slice(0, 10));
}

const siteObject = <P>(site_id: string, overall: number, baseline: number | null, pages: P) => ({
  site_id,
  overall_score: overall,
  overall_trend: scoreTrend(overall, baseline),
  pages,
});
