import { z } from 'zod';
import { pageParams } from '../../../shared/http/pagination.ts';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { ISSUE_STATUSES } from '../../../shared/domain/issue-status.ts';

export const IssueListQuerySchema = z.object({
  site_id: Uuid(),
  status: z.enum(ISSUE_STATUSES).optional(),
  ...pageParams({ max: 100, default: 20 }),
});
export type IssueListQuery = z.infer<typeof IssueListQuerySchema>;

export const IssueDetailQuerySchema = z.object({ site_id: Uuid() });
