import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { ENVIRONMENTS } from '../../../shared/domain/deploy-verification.ts';
import { pageFields, pageParams } from '../../../shared/http/pagination.ts';
import { HttpUrlSchema } from '../../http/common.schema.ts';
import { DeploySchema } from '../../read-models/deploys.schema.ts';

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

/** `Idempotency-Key` header: printable ASCII, 1-255 characters (what CI systems generate: uuids, run ids). */
export const IdempotencyKeySchema = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, 'must be 1-255 printable ASCII characters without spaces');

export const DeployListQuerySchema = z.object({
  site_id: Uuid(),
  environment: z.enum(ENVIRONMENTS).default('production'),
  ...pageParams({ max: 100, default: 20 }),
});

export const DeployListSchema = z.object({
  deploys: z.array(DeploySchema),
  ...pageFields,
});
