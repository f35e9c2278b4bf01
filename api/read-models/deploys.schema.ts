import { z } from 'zod';
import { Uuid } from '../../shared/contracts/uuid.ts';
import { ENVIRONMENTS } from '../../shared/domain/deploy-verification.ts';
import { Timestamp } from '../http/common.schema.ts';

export const VerificationRecordSchema = z.object({
  deploy_id: Uuid(),
  deploy_version: z.string(),
  result: z.enum(['verified', 'not_verified', 'insufficient_data', 'regressed', 'not_regressed']),
  signal_count_before: z.number().int(),
  signal_count_after: z.number().int(),
  verified_at: Timestamp,
  sessions_before: z.number().int(),
  sessions_after: z.number().int(),
  affected_sessions_before: z.number().int(),
  affected_sessions_after: z.number().int(),
  p_value: z.number().nullable(),
  alpha: z.number(),
  look: z.string(),
  test: z.enum(['fix', 'regression']),
  control: z
    .enum(['concurrent', 'before_window'])
    .describe(
      "which comparison decided: the sessions still on the old version in the same hours (concurrent; the *_before counts are theirs), or the issue's own before window or quiet period",
    ),
});

export const RelatedIssueSchema = z.object({
  issue_id: Uuid(),
  title: z.string(),
  page: z.string(),
  signal_type: z.string(),
  severity: z.number(),
  status: z.string(),
  relation: z.enum(['verified', 'regressed', 'introduced', 'still_failing']),
  record: VerificationRecordSchema.nullable(),
});

export const DeploySchema = z.object({
  id: Uuid(),
  site_id: Uuid(),
  version: z.string(),
  environment: z.enum(ENVIRONMENTS),
  commit_sha: z.string().nullable(),
  url: z.string().nullable(),
  description: z.string().nullable(),
  confusion_before: z.number(),
  confusion_after: z.number().nullable(),
  delta: z.number().nullable(),
  recorded_at: Timestamp,
  frozen: z.boolean(),
  cohort: z
    .object({ kind: z.enum(['version', 'time_window']), from: Timestamp, to: Timestamp, sessions: z.number().int() })
    .nullable(),
  related_issues: z.array(RelatedIssueSchema),
  verdict: z.enum(['PASS', 'WARN', 'FAIL']),
  verdict_reasons: z.array(z.string()),
  created_by: z.string(),
});
