import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { signalWeight } from '../../../shared/domain/signal-catalog.ts';
import type { ReadDeps } from '../../http/deps.ts';
import type { RouteTable } from '../../http/routes.ts';
import { journeyFrictionEdges } from './journey-edges.ts';
import { presentFlows, presentJourneys } from './journeys.presenter.ts';
import { journeySessions, navigationFlows } from './journeys.queries.ts';
import {
  EDGE_DECORATORS,
  FlowsQuerySchema,
  FlowsResponseSchema,
  JourneyQuerySchema,
  JourneysResponseSchema,
  type JourneyQuery,
} from './journeys.schema.ts';

/** `/query/journeys/friction`: friction edges of the latest `q.limit` sessions (spec "Journey friction rules"). */
export async function journeyFriction(db: Kysely<Database>, q: JourneyQuery, at: Date) {
  const types = q.signal_type ? [q.signal_type] : EDGE_DECORATORS;
  const sessions = await journeySessions(db, q, types, q.limit, at);
  const qualifying = new Set(types);
  const edges = journeyFrictionEdges(
    sessions,
    (t) => (qualifying.has(t) ? signalWeight(t) : undefined),
    q.min_friction_weight,
  );
  return presentJourneys(q.site_id, q, sessions.length, edges);
}

/** `/v1/query/journeys/friction`, `/v1/query/flows` and the short form `/v1/flows`. */
export function journeyRoutes(table: RouteTable, deps: ReadDeps): RouteTable {
  table.read({
    path: '/v1/query/journeys/friction',
    tag: 'journeys',
    summary:
      'Navigation edges weighted by the edge-decorator signals on their source or destination page; at most 100 edges, 5 examples each',
    description:
      'Sessions analysed: the limit most recently active sessions of the last 30 days with a qualifying signal. friction_weight sums weight x confidence (meta.confidence, 1 when absent) to one decimal; edges below min_friction_weight are removed, then sorted heaviest first.',
    query: JourneyQuerySchema,
    response: JourneysResponseSchema,
    handler: async (_ctx, { query }) => journeyFriction(deps.db, query, deps.now()),
  });
  return table.read({
    path: '/v1/query/flows',
    shortForm: 'Navigation flows (short form; the same shape)',
    tag: 'journeys',
    summary:
      'Page-to-page navigation of the 1000 most recently active sessions of the last 7 days: edges (from, to, sessions, transitions; busiest 100) and pages (views, entries, exits; busiest 100)',
    query: FlowsQuerySchema,
    response: FlowsResponseSchema,
    handler: async (_ctx, { query }) =>
      presentFlows(query.site_id, await navigationFlows(deps.db, query.site_id, query.environment, deps.now())),
  });
}
