import { z } from 'zod';
import { Score, SiteScoresSchema, Trend } from '../../read-models/scores.schema.ts';

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
