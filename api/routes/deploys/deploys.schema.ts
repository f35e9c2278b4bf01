import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { ENVIRONMENTS } from '../../../shared/domain/deploy-verification.ts';
import { pageParams } from '../../../shared/http/pagination.ts';
import { HttpUrlSchema, Timestamp } from '../../http/common.schema.ts';

/** Body of POST /v1/deploys (and /v1/manage/deploys). Unknown fields are refused (400 naming them). */
// PostgreSQL text cannot hold NUL; a version is one line, so no control characters at all.
const NO_CONTROL = /^[^\u0000-\u001f\u007f]*$/;
const NO_NUL = /^[^\u0000]*$/;

export const DeployCreateSchema = z.strictObject({
  version: z.string().trim().min(1).max(128).regex(NO_CONTROL, 'must not contain control characters'),
  environment: z.enum(ENVIRONMENTS).default('production'),
  /** Required with a user token of an org with several sites; a site-scoped key may omit it (its own site). */
  site_id: Uuid().optional(),
  commit_sha: z
    .string()
    .regex(/^[0-9a-fA-F]{7,64}$/, 'must be a hex commit hash (7-64 characters)')
    .optional(),
  url: HttpUrlSchema.optional(),
  description: z.string().trim().max(1000).regex(NO_NUL, 'must not contain NUL characters').optional(),
});
export type DeployCreate = z.infer<typeof DeployCreateSchema>;

/** `Idempotency-Key` header: printable ASCII, 1-255 characters (what CI systems generate: uuids, run ids). */
export const IdempotencyKeySchema = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, 'must be 1-255 printable ASCII characters without spaces');

export const DeployListQuerySchema = z.object({
  site_id: Uuid(),
  environment: z.enum(ENVIRONMENTS).default('production'),
  ...pageParams({ max: 100, default: 20 }),
});
export type DeployListQuery = z.infer<typeof DeployListQuerySchema>;
export const DeployDetailQuerySchema = z.object({ site_id: Uuid() });

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
export const DeployListSchema = z.object({
  deploys: z.array(DeploySchema),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
});
