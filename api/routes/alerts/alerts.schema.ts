import { z } from 'zod';
import { EnvironmentParam } from '../../../shared/contracts/environment.ts';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { pageFields, pageParams } from '../../../shared/http/pagination.ts';
import { SETTABLE_ALERT_STATUSES } from './alert-transitions.ts';
import { ALERT_STATUSES, AlertSchema, type AlertStatus } from '../../read-models/alerts.schema.ts';

export const AlertListQuerySchema = z.object({
  site_id: Uuid(),
  // The short-form reference filters with `open` and `active` for alerts that fired and are untouched: both mean `fired`.
  status: z
    .enum([...ALERT_STATUSES, 'open', 'active'])
    .transform((s): AlertStatus => (s === 'open' || s === 'active' ? 'fired' : s))
    .optional()
    .describe('fired (also spelled open or active), acknowledged, investigating or resolved'),
  // Alert rules evaluate the site's production traffic only (issue 15), so staging's list is always empty: the
  // parameter is the one every read route takes (ARCHITECTURE: read routes take an optional environment).
  environment: EnvironmentParam.describe(
    'production (default) or staging; alert rules watch production traffic, so staging has no alerts',
  ),
  ...pageParams({ max: 100, default: 20 }),
});
export type AlertListQuery = z.infer<typeof AlertListQuerySchema>;

/** `/query/alerts` and `/v1/alerts`. */
export const AlertListResponseSchema = z.object({
  alerts: z.array(AlertSchema),
  ...pageFields,
});

export const AlertPatchSchema = z
  .strictObject({
    status: z.enum(SETTABLE_ALERT_STATUSES),
    resolved_reason: z.string().trim().min(1).max(500).optional(),
  })
  .refine((b) => b.resolved_reason === undefined || b.status === 'resolved', {
    path: ['resolved_reason'],
    error: 'only accompanies status resolved',
  });
