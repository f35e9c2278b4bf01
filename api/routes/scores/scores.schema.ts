import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';

export const Trend = z.enum(['up', 'down', 'stable']);
export const Score = z.number().min(0).max(100).describe('confusion score, 0-100, one decimal');

export const PageScoreSchema = z
  .object({
    page: z.string(),
    score: Score,
    trend: Trend,
    dominant_signal: z.string().nullable(),
  })
  .meta({ id: 'PageScore' });

export const SiteScoresSchema = z
  .object({
    site_id: Uuid(),
    overall_score: Score,
    overall_trend: Trend,
    pages: z.array(PageScoreSchema),
  })
  .meta({ id: 'SiteScores' });

/** GET /v1/query/scores: the site object, as `data` itself and again as `data.site` (the spec's "site object"). */
export const ScoresResponseSchema = SiteScoresSchema.extend({ site: SiteScoresSchema });

/** GET /v1/scores (short form). */
export const ShortScoresResponseSchema = z.object({
  scores: z.array(
    z
      .object({
        page: z.string(),
        score: Score,
        trend: Trend,
        top_signal: z.string().nullable(),
        issue_count: z.number().int(),
        updated_at: z.string(),
      })
      .meta({ id: 'ShortPageScore' }),
  ),
});
