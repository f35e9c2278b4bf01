import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { pageParams } from '../../../shared/http/pagination.ts';
import { ALERT_STATUSES, type AlertStatus } from '../manage/alerts/alert-transitions.ts';

export const AlertListQuerySchema = z.object({
  site_id: Uuid(),
  // The short-form reference filters with `open` and `active` for alerts that fired and are untouched: both mean `fired`.
  status: z
    .enum([...ALERT_STATUSES, 'open', 'active'])
    .transform((s): AlertStatus => (s === 'open' || s === 'active' ? 'fired' : s))
    .optional()
    .describe('fired (also spelled open or active), acknowledged, investigating or resolved'),
  ...pageParams({ max: 100, default: 20 }),
});
export type AlertListQuery = z.infer<typeof AlertListQuerySchema>;

export const AlertDetailQuerySchema = z.object({ site_id: Uuid() });
