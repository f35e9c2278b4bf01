import { PagePath, DaysParam } from '../../http/common.schema.ts';
import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { EnvironmentParam } from '../../../shared/contracts/environment.ts';
import { DeploySchema } from '../../read-models/deploys.schema.ts';
import { PageElementSchema } from '../../read-models/elements.schema.ts';
import { IssueSchema } from '../../read-models/issues.schema.ts';
import { AlertSchema } from '../../read-models/alerts.schema.ts';
import { Timestamp } from '../../http/common.schema.ts';
import { Score, Trend } from '../../read-models/scores.schema.ts';

export const PageQuerySchema = z.object({ site_id: Uuid(), page: PagePath, environment: EnvironmentParam });

export const TrendsQuerySchema = z.object({
  site_id: Uuid(),
  page: PagePath.optional(),
  days: DaysParam,
  environment: EnvironmentParam,
});

export const CompareQuerySchema = z.object({
  site_id: Uuid(),
  a: PagePath,
  b: PagePath,
  environment: EnvironmentParam,
});

const ScoreFields = { score: Score, trend: Trend, dominant_signal: z.string().nullable() };
const ScorePoint = z.object({ date: z.string().describe('YYYY-MM-DD'), score: Score }).meta({ id: 'ScorePoint' });

/** `/query/page` and `/v1/page`. */
export const PageResponseSchema = z
  .object({
    page: z.string(),
    ...ScoreFields,
    updated_at: Timestamp.nullable(),
    score_history: z.array(ScorePoint),
    issues: z.array(IssueSchema),
    elements: z.array(PageElementSchema),
    budget: z.object({
      limit: z
        .number()
        .nullable()
        .describe('the strictest threshold of the enabled budget rules matching the page; null when none does'),
      current: Score,
      exceeded: z.boolean(),
    }),
    deploys: z.array(DeploySchema),
    alerts: z.array(AlertSchema),
  })
  .meta({ id: 'Page' });

/** `/query/trends` and `/v1/trends`: the same array as `history` and `data`. */
export const TrendsResponseSchema = z.object({
  page: z.string().nullable(),
  days: z.number().int(),
  history: z.array(ScorePoint),
  data: z.array(ScorePoint),
});

const SignalCounts = z.record(z.string(), z.number());
const ComparedPage = z
  .object({
    page: z.string(),
    ...ScoreFields,
    sessions: z.number().int(),
    signals: SignalCounts,
    open_issues: z.number().int(),
  })
  .meta({ id: 'ComparedPage' });

/** `/query/compare` and `/v1/compare`: `difference` is b minus a. */
export const CompareResponseSchema = z.object({
  a: ComparedPage,
  b: ComparedPage,
  difference: z.object({
    score: z.number(),
    sessions: z.number().int(),
    open_issues: z.number().int(),
    signals: SignalCounts,
  }),
  higher_friction: z.enum(['a', 'b']).nullable(),
});
