import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { pageParams } from '../../../shared/http/pagination.ts';
import { ALERT_STATUSES } from '../manage/alerts/alert-transitions.ts';

export const AlertListQuerySchema = z.object({
  site_id: Uuid(),
  status: z.enum(ALERT_STATUSES).optional(),
  ...pageParams({ max: 100, default: 20 }),
});
export type AlertListQuery = z.infer<typeof AlertListQuerySchema>;

export const AlertDetailQuerySchema = z.object({ site_id: Uuid() });
