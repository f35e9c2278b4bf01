import { z } from 'zod';
import { ENVIRONMENTS } from '../../../shared/domain/deploy-verification.ts';
import { SdkConfigPatchSchema, SdkConfigSchema } from '../../../shared/tenancy/sdk-config.ts';
import { NON_EMPTY, nonEmpty, Timestamp } from '../../http/common.schema.ts';
import { Uuid } from '../../../shared/contracts/uuid.ts';

/** Only production and staging exist (spec): any other name is a 404, like a missing object. */
export const SdkConfigParamsSchema = z.object({ environment: z.enum(ENVIRONMENTS) });
/** The site: in the query or the body (a site-scoped key may omit it: its own site). */
export const SdkConfigPatchQuerySchema = z.object({ site_id: Uuid().optional() });

/** Fields not sent stay as they are; `revenue_config` and `segment` merge field by field. */
export const SdkConfigPatchBodySchema = SdkConfigPatchSchema.extend({ site_id: Uuid().optional() }).refine(
  ({ site_id: _site, ...fields }) => nonEmpty(fields),
  NON_EMPTY,
);

export const EnvironmentConfigSchema = z.object({
  environment: z.string(),
  config: SdkConfigSchema,
  updated_at: Timestamp,
});
export const SdkConfigListSchema = z.object({ site_id: Uuid(), environments: z.array(EnvironmentConfigSchema) });
export const SdkConfigUpdatedSchema = EnvironmentConfigSchema.extend({ site_id: Uuid() });
