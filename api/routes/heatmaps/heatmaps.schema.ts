import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { PagePath, QueryText } from '../pages/page.schema.ts';

export const ElementHeatmapQuerySchema = z.object({
  site_id: Uuid(),
  page: PagePath,
  selector: QueryText(512).describe('the element\'s CSS selector as the SDK sent it (an issue\'s selector)'),
});
export type ElementHeatmapQuery = z.infer<typeof ElementHeatmapQuerySchema>;

export const HEATMAP_DEVICES = ['desktop', 'mobile'] as const;

export const PageHeatmapQuerySchema = z.object({
  site_id: Uuid(),
  page: PagePath,
  device: z.enum(HEATMAP_DEVICES).optional().describe('desktop, or mobile (phones and tablets); omitted: all devices'),
});
export type PageHeatmapQuery = z.infer<typeof PageHeatmapQuerySchema>;
