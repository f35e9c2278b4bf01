import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { EnvironmentParam } from '../../../shared/contracts/environment.ts';
import { SIGNAL_CATALOG } from '../../../shared/domain/signal-catalog.ts';

/** Signal types that decorate journey edges (catalog `journey_edge_decorator`). */
export const EDGE_DECORATORS = SIGNAL_CATALOG.filter((d) => d.journey_edge_decorator).map((d) => d.type) as [
  string,
  ...string[],
];

export const JourneyQuerySchema = z.object({
  site_id: Uuid(),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(250)
    .describe('sessions analysed: the most recently active ones of the last 30 days with a qualifying signal'),
  min_friction_weight: z.coerce
    .number()
    .int()
    .min(0)
    .max(1000)
    .default(1)
    .describe('edges weighing less are removed before sorting'),
  signal_type: z.enum(EDGE_DECORATORS).optional().describe('only this edge-decorator signal type; default all of them'),
  environment: EnvironmentParam,
});
export type JourneyQuery = z.infer<typeof JourneyQuerySchema>;

export const FlowsQuerySchema = z.object({ site_id: Uuid(), environment: EnvironmentParam });

/** `/query/journeys/friction`. */
export const JourneysResponseSchema = z.object({
  site_id: Uuid(),
  window_days: z.number().int(),
  sessions_analyzed: z.number().int(),
  limit: z.number().int(),
  min_friction_weight: z.number(),
  signal_type: z.string().nullable(),
  edges: z.array(
    z
      .object({
        from: z.string(),
        to: z.string(),
        sessions: z.number().int(),
        friction_weight: z.number(),
        signals: z.record(z.string(), z.number()).describe('signals by type on the edge'),
        examples: z.array(
          z.object({
            session_id: z.string(),
            page: z.string(),
            signal_type: z.string(),
            element_selector: z.string().nullable(),
            occurred_at: z.string(),
          }),
        ),
      })
      .meta({ id: 'JourneyEdge' }),
  ),
});

/** `/query/flows` and `/v1/flows`. */
export const FlowsResponseSchema = z.object({
  site_id: Uuid(),
  window_days: z.number().int(),
  max_sessions: z.number().int(),
  sessions_analyzed: z.number().int(),
  edges: z.array(
    z
      .object({ from: z.string(), to: z.string(), sessions: z.number().int(), transitions: z.number().int() })
      .meta({ id: 'FlowEdge' }),
  ),
  pages: z.array(
    z
      .object({ page: z.string(), views: z.number().int(), entries: z.number().int(), exits: z.number().int() })
      .meta({ id: 'FlowPage' }),
  ),
});
