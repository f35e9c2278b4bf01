import { z } from 'zod';
import { Timestamp } from '../../http/common.schema.ts';
import { Uuid } from '../../../shared/contracts/uuid.ts';

export const UsageSchema = z.object({
  org_id: Uuid(),
  plan: z.string(),
  trial_ends_at: Timestamp.nullable(),
  trial_active: z.boolean(),
  limits: z
    .object({ sites: z.number().int().nullable(), sessions_per_month: z.number().int().nullable() })
    .describe('null: unlimited'),
  usage: z.object({
    sites: z.number().int(),
    sessions_this_month: z.number().int(),
    month_start: Timestamp,
    resets_at: Timestamp,
  }),
  sessions_exceeded: z.boolean().describe('true: ingest answers 429 quota_exceeded until resets_at'),
});
