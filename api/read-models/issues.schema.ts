import { z } from 'zod';
import { Uuid } from '../../shared/contracts/uuid.ts';
import { ISSUE_STATUSES } from '../../shared/domain/issue-status.ts';
import { Timestamp } from '../http/common.schema.ts';

/** An issue as every route shows it (presentIssue is typed by this schema, so the two cannot drift). */
export const IssueSchema = z
  .object({
    id: Uuid(),
    site_id: Uuid(),
    title: z.string(),
    page: z.string(),
    element_selector: z.string().nullable(),
    selector: z.string().nullable(),
    type: z.string(),
    signal_type: z.string(),
    label: z.string().nullable(),
    signal_count: z.number().int(),
    affected_sessions: z.number().int(),
    severity: z.number().min(0).max(100),
    status: z.enum(ISSUE_STATUSES),
    signalling_again: z
      .boolean()
      .describe(
        "A resolved or verified issue that 3 or more sessions signalled again since it was closed: a live signal for people to see. Its status changes only when a deploy look's regression test decides `regressed`.",
      ),
    note: z.string().nullable(),
    assigned_to: z.string().nullable(),
    frozen: z.boolean(),
    merged_into: z.string().nullable(),
    last_signal_at: Timestamp.nullable(),
    created_at: Timestamp.nullable(),
    updated_at: Timestamp.nullable(),
  })
  .meta({ id: 'Issue' });
export type IssueDto = z.output<typeof IssueSchema>;
