import { z } from 'zod';
import { HttpUrlSchema, NON_EMPTY, nonEmpty, Timestamp } from '../../http/common.schema.ts';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { MAX_RETENTION_DAYS, MIN_RETENTION_DAYS } from '../../../shared/tenancy/retention.ts';

export const SITE_STATUSES = ['active', 'paused', 'degraded'] as const;

export const SiteParamsSchema = z.object({ site_id: Uuid() });
export const SiteCreateSchema = z.strictObject({
  org_id: Uuid(),
  name: z.string().trim().min(1).max(120),
  url: HttpUrlSchema,
});
export const SitePatchSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(120).optional(),
    url: HttpUrlSchema.optional(),
    status: z.enum(SITE_STATUSES).optional(),
    retention_days: z
      .number()
      .int()
      .min(MIN_RETENTION_DAYS)
      .max(MAX_RETENTION_DAYS)
      .nullable()
      .optional()
      .describe(
        `days the site's events, signals and sessions are kept, ${MIN_RETENTION_DAYS} to ${MAX_RETENTION_DAYS}; null: ${MAX_RETENTION_DAYS}`,
      ),
  })
  .refine(nonEmpty, NON_EMPTY);

export const SiteSchema = z.object({
  id: Uuid(),
  org_id: Uuid(),
  name: z.string(),
  url: z.string(),
  status: z.enum(SITE_STATUSES),
  created_at: Timestamp,
  updated_at: Timestamp,
  retention_days: z.number().int().nullable().describe(`null: the instance's ${MAX_RETENTION_DAYS} days`),
});
export const SiteCreatedSchema = z.object({
  site: SiteSchema,
  environment: z.string().describe('the production environment created with the site'),
  publishable_key: z.string().describe('svc_pub_…, shown once'),
  secret_key: z.string().describe('svc_sec_… scoped to this site with query:read and manage:write, shown once'),
});
export const SiteListSchema = z.object({ sites: z.array(SiteSchema) });
