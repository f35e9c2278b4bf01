import { z } from 'zod';
import { journeyFriction } from '../../routes/journeys/journeys.routes.ts';
import { EDGE_DECORATORS } from '../../routes/journeys/journeys.schema.ts';
import { defineTool, envOf, environmentArg, limitArg, listMeta, siteArg, Count } from './tool.ts';

export const journeysTool = defineTool({
  name: 'friction_journeys',
  title: 'Friction journeys',
  description: 'Page-to-page steps where users hit friction, heaviest first, with the signals on each.',
  input: {
    site_id: siteArg,
    environment: environmentArg,
    limit: limitArg(100, 10),
    signal_type: z.enum(EDGE_DECORATORS).optional(),
    min_friction_weight: z.number().int().min(0).max(1000).optional().describe('default 1'),
  },
  output: z.object({
    sessions_analyzed: Count,
    edges: z.array(
      z.object({
        from: z.string(),
        to: z.string(),
        sessions: Count,
        friction_weight: z.number(),
        signals: z.record(z.string(), z.number()),
      }),
    ),
    ...listMeta,
  }),
  async run(c, a, siteId) {
    // The REST route's defaults: the latest 250 sessions with a qualifying signal.
    const j = await journeyFriction(
      c.db,
      {
        site_id: siteId,
        environment: envOf(a.environment),
        limit: 250,
        min_friction_weight: a.min_friction_weight ?? 1,
        signal_type: a.signal_type,
      },
      c.now(),
    );
    const edges = j.edges.slice(0, a.limit ?? 10).map((e) => ({
      from: e.from,
      to: e.to,
      sessions: e.sessions,
      friction_weight: e.friction_weight,
      signals: e.signals,
    }));
    const top = edges[0];
    return {
      data: {
        sessions_analyzed: j.sessions_analyzed,
        edges,
        total: j.edges.length,
        truncated: edges.length < j.edges.length,
      },
      summary:
        `${edges.length} of ${j.edges.length} friction edge(s) from ${j.sessions_analyzed} session(s)` +
        (top ? `; heaviest ${top.from} → ${top.to} (weight ${top.friction_weight}, ${top.sessions} session(s))` : ''),
    };
  },
});
