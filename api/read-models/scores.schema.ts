import { z } from 'zod';
import { Uuid } from '../../shared/contracts/uuid.ts';

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
