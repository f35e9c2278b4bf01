import type { z } from 'zod';
import type { FlowsResponseSchema, JourneysResponseSchema } from './journeys.schema.ts';
import { presentSessionId } from '../../http/present.ts';
import type { JourneyEdge } from './journey-edges.ts';
import { FLOW_MAX_SESSIONS, FLOW_WINDOW_DAYS, JOURNEY_WINDOW_DAYS } from './journeys.queries.ts';

/** `/query/journeys/friction`: the spec's `site_id` and `edges[]`, plus the parameters the result was built with. */
export function presentJourneys(
  siteId: string,
  q: { limit: number; min_friction_weight: number; signal_type?: string },
  sessionsAnalysed: number,
  edges: JourneyEdge[],
): z.output<typeof JourneysResponseSchema> {
  return {
    site_id: siteId,
    window_days: JOURNEY_WINDOW_DAYS,
    sessions_analyzed: sessionsAnalysed,
    limit: q.limit,
    min_friction_weight: q.min_friction_weight,
    signal_type: q.signal_type ?? null,
    edges: edges.map((e) => ({
      ...e,
      examples: e.examples.map((x) => ({ ...x, session_id: presentSessionId(x.session_id) })),
    })),
  };
}

/** `/query/flows` and `/v1/flows`. */
export function presentFlows(
  siteId: string,
  f: {
    edges: { from: string; to: string; sessions: number; transitions: number }[];
    pages: { page: string; views: number; entries: number; exits: number }[];
    sessions: number;
  },
): z.output<typeof FlowsResponseSchema> {
  return {
    site_id: siteId,
    window_days: FLOW_WINDOW_DAYS,
    max_sessions: FLOW_MAX_SESSIONS,
    sessions_analyzed: f.sessions,
    edges: f.edges,
    pages: f.pages,
  };
}
