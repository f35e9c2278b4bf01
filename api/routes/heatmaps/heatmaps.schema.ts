import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { EnvironmentParam } from '../../../shared/contracts/environment.ts';
import { PagePath, QueryText } from '../../http/common.schema.ts';

export const ElementHeatmapQuerySchema = z.object({
  site_id: Uuid(),
  environment: EnvironmentParam,
  page: PagePath,
  selector: QueryText(512).describe("the element's CSS selector as the SDK sent it (an issue's selector)"),
});

export const HEATMAP_DEVICES = ['desktop', 'mobile'] as const;

export const PageHeatmapQuerySchema = z.object({
  site_id: Uuid(),
  environment: EnvironmentParam,
  page: PagePath,
  device: z.enum(HEATMAP_DEVICES).optional().describe('desktop, or mobile (phones and tablets); omitted: all devices'),
});

const Unit = z.number().min(0).max(1);

/** `/query/element-heatmap`: `count` is the number of signals the points represent. */
export const ElementHeatmapResponseSchema = z.object({
  page: z.string(),
  selector: z.string(),
  count: z.number().int(),
  points: z.array(z.object({ rx: Unit, ry: Unit, signal: z.string() })),
});

/** `/query/page-heatmap`: `px`/`py` only when the SDK sent them, `el` only when the element was identified. */
export const PageHeatmapResponseSchema = z.object({
  page: z.string(),
  device: z.string().nullable(),
  count: z.number().int(),
  points: z.array(
    z.object({
      vx: Unit,
      vy: Unit,
      px: Unit.optional(),
      py: Unit.optional(),
      signal: z.string(),
      el: z.string().optional(),
    }),
  ),
});
