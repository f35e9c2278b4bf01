import { z } from 'zod';
import { pageParams } from '../../../shared/http/pagination.ts';

/** Issue states (spec "Issue status") plus `regressed`, which the engine sets and the list filter accepts. */
export const ISSUE_STATUSES = ['open', 'triaged', 'in_progress', 'verified', 'resolved', 'ignored', 'regressed'] as const;

export const IssueListQuerySchema = z.object({
  site_id: z.uuid(),
  status: z.enum(ISSUE_STATUSES).optional(),
  ...pageParams({ max: 100, default: 20 }),
});
export type IssueListQuery = z.infer<typeof IssueListQuerySchema>;

export const IssueDetailQuerySchema = z.object({ site_id: z.uuid() });
