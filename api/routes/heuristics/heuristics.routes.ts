import Router from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import { SIGNAL_CATALOG } from '../../../shared/domain/signal-catalog.ts';
import { ok } from '../../../shared/http/envelope.ts';
import { siteQuery } from '../../http/auth.ts';
import { SiteQuerySchema } from '../scores/scores.schema.ts';

export const HeuristicsResponseSchema = z.object({
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
export function heuristicsRouter(deps: { readAuth: Koa.Middleware }): Router {
  const router = new Router();
  router.get('/v1/query/heuristics', deps.readAuth, (ctx) => {
    siteQuery(ctx, SiteQuerySchema);
    ctx.body = ok({
      heuristics: SIGNAL_CATALOG.map((d) => ({
        type: d.type,
        weight: d.weight,
        journey_edge_decorator: d.journey_edge_decorator,
        recommendation: d.recommendation,
        detection: d.detection,
      })),
      total_heuristics: SIGNAL_CATALOG.length,
    } satisfies z.output<typeof HeuristicsResponseSchema>);
  });
  return router;
}
