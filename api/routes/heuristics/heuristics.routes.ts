import { z } from 'zod';
import { SIGNAL_CATALOG } from '../../../shared/domain/signal-catalog.ts';
import type { RouteTable } from '../../http/routes.ts';
import { SiteReadQuerySchema } from '../../http/common.schema.ts';

const HeuristicsResponseSchema = z.object({
  heuristics: z.array(
    z
      .object({
        type: z.string(),
        weight: z.number(),
        journey_edge_decorator: z.boolean(),
        recommendation: z.string(),
        detection: z.string(),
      })
      .meta({ id: 'Heuristic' }),
  ),
  total_heuristics: z.number().int(),
});

/** `GET /v1/query/heuristics`: the signal catalog (every type the engine weighs, and what to do about it). */
export function heuristicRoutes(table: RouteTable): RouteTable {
  return table.read({
    path: '/v1/query/heuristics',
    tag: 'heuristics',
    summary: 'The signal catalog',
    query: SiteReadQuerySchema,
    response: HeuristicsResponseSchema,
    handler: async () =>
      ({
        heuristics: SIGNAL_CATALOG.map((d) => ({
          type: d.type,
          weight: d.weight,
          journey_edge_decorator: d.journey_edge_decorator,
          recommendation: d.recommendation,
          detection: d.detection,
        })),
        total_heuristics: SIGNAL_CATALOG.length,
      }) satisfies z.output<typeof HeuristicsResponseSchema>,
  });
}
