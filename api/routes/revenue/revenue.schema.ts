import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { DaysParam } from '../pages/page.schema.ts';

export const RevenueQuerySchema = z.object({ site_id: Uuid() });
export const RecommendationsQuerySchema = z.object({
  site_id: Uuid(),
  limit: z.coerce.number().int().min(1).max(100).default(20).describe('fixes listed, 1-100'),
});
export const InsightsQuerySchema = z.object({ site_id: Uuid(), days: DaysParam });
