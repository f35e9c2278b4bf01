import { z } from 'zod';
import { pageFields, pageParams } from '../../../shared/http/pagination.ts';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { EnvironmentParam } from '../../../shared/contracts/environment.ts';
import { ISSUE_STATUSES } from '../../../shared/domain/issue-status.ts';
import { NON_EMPTY, nonEmpty, Timestamp } from '../../http/common.schema.ts';
import { IssueSchema } from '../../read-models/issues.schema.ts';

export const IssueListQuerySchema = z.object({
  site_id: Uuid(),
  environment: EnvironmentParam,
  status: z.enum(ISSUE_STATUSES).optional(),
  ...pageParams({ max: 100, default: 20 }),
});

export const IssueListResponseSchema = z.object({
  issues: z.array(IssueSchema),
  ...pageFields,
});

export const IssueDetailSchema = IssueSchema.extend({
  hypothesis: z.string().nullable(),
  first_signal_at: Timestamp.nullable(),
  resolved_at: Timestamp.nullable(),
  sessions: z.array(z.object({ id: z.string(), signals: z.number().int(), timestamp: Timestamp.nullable() })),
  verifications: z.array(z.record(z.string(), z.unknown())),
  introduced_by_deploy: z.unknown().describe('the deploy after which the issue first appeared, when known'),
  history: z.array(
    z.object({
      source: z.string(),
      kind: z.string(),
      changes: z.unknown(),
      reason: z.string().nullable(),
      at: Timestamp.nullable(),
    }),
  ),
}).meta({ id: 'IssueDetail' });

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
