import { z } from 'zod';
import { NON_EMPTY, nonEmpty, Timestamp } from '../../http/common.schema.ts';
import { Uuid } from '../../../shared/contracts/uuid.ts';

/** The six statuses a person may set. `regressed` is the engine's verdict after a deploy and is never set by hand. */
export const SETTABLE_ISSUE_STATUSES = ['open', 'triaged', 'in_progress', 'verified', 'resolved', 'ignored'] as const;

export const IssuePatchSchema = z
  .strictObject({
    status: z.enum(SETTABLE_ISSUE_STATUSES).optional(),
    note: z.string().max(1000).nullable().optional(),
    assigned_to: z.string().max(256).nullable().optional(),
    frozen: z.boolean().optional(),
    // The column is a 4-byte float: 5e-324 would underflow it (a database error), so the value is kept to 4 decimals.
    severity: z
      .number()
      .min(0)
      .max(100)
      .transform((v) => Math.round(v * 10_000) / 10_000)
      .describe('0 to 100, kept to 4 decimal places')
      .optional(),
  })
  .refine(nonEmpty, NON_EMPTY);

export const IssueRecordSchema = z.object({
  id: Uuid(),
  site_id: Uuid(),
  title: z.string(),
  page: z.string(),
  element_selector: z.string(),
  selector: z.string(),
  type: z.string(),
  signal_type: z.string(),
  signal_count: z.number().int(),
  affected_sessions: z.number().int(),
  severity: z.number(),
  status: z.string(),
  note: z.string().nullable(),
  assigned_to: z.string().nullable(),
  frozen: z.boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
