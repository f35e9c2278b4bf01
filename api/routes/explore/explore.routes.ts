import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { ValidationError } from '../../../shared/errors.ts';
import { parseInput } from '../../../shared/http/envelope.ts';
import { ALL_ROLES, READ_SCOPES } from '../../http/auth.ts';
import type { RouteTable } from '../../http/routes.ts';
import { explore } from './explore.engine.ts';
import {
  ExploreGetQuerySchema,
  ExplorePostQuerySchema,
  ExploreQuerySchema,
  ExploreResultSchema,
} from '../../read-models/explore.schema.ts';

export interface ExploreDeps {
  db: Kysely<Database>;
  kind: 'postgres' | 'pglite';
  timeoutMs: number;
  now: () => Date;
}

const DESCRIPTION =
  'The typed Explore engine over sessions and events (docs/explorer.md). A query has window_days (1-90, default 7), ' +
  'filters (at most 12, AND-ed: field signal|page|source|confused|converted|event_type, op is|is_not|contains, a boolean ' +
  'value for confused and converted, contains on text fields only) and output: {mode: list, limit 1-500 (default 100)} ' +
  'for the matching sessions with their summaries, or {mode: measure, metric count|avg_pageviews|conversion_rate|' +
  'avg_dwell_ms|bounce_rate, group_by? page|source|day|signal|cohort}. GET and POST run the same engine and answer alike. ' +
  'A bad query is 400 invalid_input whose details name the path (filters[3].op); a query that outruns the statement ' +
  'timeout is 503. meta says how long it took, the window used and whether the answer was cut.';

/** `GET /v1/query/explore?site_id=&q=` and `POST /v1/query/explore?site_id=`: one engine, the same answer. */
export function exploreRoutes(table: RouteTable, deps: ExploreDeps): RouteTable {
  const access = { surface: 'read', scopes: READ_SCOPES, roles: ALL_ROLES } as const;
  table.add({
    method: 'get',
    path: '/v1/query/explore',
    tag: 'explore',
    summary: 'Explore sessions: list them or measure a metric (query as URL-encoded JSON in q)',
    description: DESCRIPTION,
    access,
    query: ExploreGetQuerySchema,
    response: ExploreResultSchema,
    async handler(_ctx, { query, guard }) {
      // Validated before the tenancy check, as POST's body is: the same query gets the same answer either way.
      let parsed: unknown;
      try {
        parsed = JSON.parse(query.q);
      } catch (err) {
        const why = `is not valid JSON (${(err as Error).message})`;
        throw new ValidationError(`invalid query: q: ${why}`, [{ path: 'q', message: why }]);
      }
      const q = parseInput(ExploreQuerySchema, parsed, 'query');
      guard.site(query.site_id, 'site not found');
      return explore(deps, { siteId: query.site_id, environment: query.environment, query: q, now: deps.now() });
    },
  });
  table.add({
    method: 'post',
    path: '/v1/query/explore',
    tag: 'explore',
    summary: 'Explore sessions: list them or measure a metric (query as the JSON body)',
    description: DESCRIPTION,
    access,
    query: ExplorePostQuerySchema,
    body: ExploreQuerySchema,
    response: ExploreResultSchema,
    async handler(_ctx, { query, body, guard }) {
      guard.site(query.site_id, 'site not found');
      return explore(deps, { siteId: query.site_id, environment: query.environment, query: body, now: deps.now() });
    },
  });
  return table;
}
