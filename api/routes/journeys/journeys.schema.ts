import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { SIGNAL_CATALOG } from '../../../shared/domain/signal-catalog.ts';

/** Signal types that decorate journey edges (catalog `journey_edge_decorator`). */
export const EDGE_DECORATORS = SIGNAL_CATALOG.filter((d) => d.journey_edge_decorator).map((d) => d.type) as [string, ...string[]];

export const JourneyQuerySchema = z.object({
  site_id: Uuid(),
  limit: z.coerce.number().int().min(1).max(1000).default(250).describe('sessions analysed: the most recently active ones of the last 30 days with a qualifying signal'),
  min_friction_weight: z.coerce.number().int().min(0).max(1000).default(1).describe('edges weighing less are removed before sorting'),
  signal_type: z.enum(EDGE_DECORATORS).optional().describe('only this edge-decorator signal type; default all of them'),
});
export type JourneyQuery = z.infer<typeof JourneyQuerySchema>;

export const FlowsQuerySchema = z.object({ site_id: Uuid() });
