import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import { ALL_ROLES, READ_SCOPES } from '../../http/auth.ts';
import type { RouteTable } from '../../http/routes.ts';
import type { ManageDeps } from '../../http/deps.ts';
import { listDeploys } from '../../read-models/deploys.queries.ts';
import { presentDeploy } from '../../read-models/deploys.presenter.ts';
import { siteScores } from '../../read-models/site-scores.ts';
import { activeAlerts, activeIssues } from './context.queries.ts';
import { presentContext, type ContextParts } from './context.presenter.ts';
import {
  CONTEXT_BUDGET_BYTES,
  CONTEXT_CAPS,
  CONTEXT_TEXT_MAX,
  ContextQuerySchema,
  SiteContextSchema,
  type SiteContext,
} from './context.schema.ts';

/**
 * The site's best-ranked fixes and the count of all: revenue's ranking (api/routes/revenue/recommendations.ts),
 * handed in by whoever wires the routes (the plane, the MCP tool), so this folder reads no other route folder.
 */
export type Recommend = (
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  at: Date,
  limit: number,
) => Promise<{ recommendations: ContextParts['recommendations']['rows']; total: number }>;

/**
 * The site context for AI assistants in one read: worst pages, active issues, recent deploys with their verdicts, active
 * alerts and the top recommendations, each list capped (CONTEXT_CAPS) and the whole within CONTEXT_BUDGET_BYTES. The
 * same function answers the REST route and the MCP tool, so the two cannot differ.
 */
export async function loadSiteContext(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  at: Date,
  recommend: Recommend,
): Promise<SiteContext> {
  const [scores, issues, deploys, alerts, recommendations] = await Promise.all([
    siteScores(db, siteId, environment, at),
    activeIssues(db, siteId, environment, CONTEXT_CAPS.issues),
    listDeploys(db, { site_id: siteId, environment, limit: CONTEXT_CAPS.deploys, offset: 0 }),
    // Alert rules watch production only: a staging context has no alerts (as /query/alerts).
    environment === 'production' ? activeAlerts(db, siteId, CONTEXT_CAPS.alerts) : { rows: [], total: 0 },
    recommend(db, siteId, environment, at, CONTEXT_CAPS.recommendations),
  ]);
  return presentContext(
    {
      siteId,
      environment,
      at,
      overall: { score: scores.overall_score, trend: scores.overall_trend },
      pages: scores.pages,
      issues,
      deploys: { rows: deploys.rows.map((d) => presentDeploy(d, deploys.related)), total: deploys.total },
      alerts,
      recommendations: { rows: recommendations.recommendations, total: recommendations.total },
    },
    CONTEXT_CAPS,
  );
}

const DESCRIPTION =
  `One compact answer for an AI assistant: the worst pages (cap ${CONTEXT_CAPS.pages}), active issues by severity (cap ${CONTEXT_CAPS.issues}), ` +
  `recent deploys with before, after, delta and verdict (cap ${CONTEXT_CAPS.deploys}), active alerts including those routed to the mcp channel ` +
  `(cap ${CONTEXT_CAPS.alerts}) and the top recommendations (cap ${CONTEXT_CAPS.recommendations}). Each list carries its total and truncated; ` +
  `free text is clipped to ${CONTEXT_TEXT_MAX} characters and the whole data object stays within ${CONTEXT_BUDGET_BYTES} bytes of JSON. ` +
  'Guide surface: 200 requests per minute per site (GUIDE_RATE_LIMIT_PER_MIN), 429 with Retry-After past it.';

/** `GET /v1/query/mcp/context` and its short form `GET /v1/mcp/context`. */
export function contextRoutes(table: RouteTable, deps: ManageDeps, recommend: Recommend): RouteTable {
  return table.read({
    path: '/v1/query/mcp/context',
    shortForm: {
      summary: 'Site context for AI assistants (short form; the same shape)',
      description: DESCRIPTION,
    },
    tag: 'mcp',
    summary: 'Site context for AI assistants in one call',
    description: DESCRIPTION,
    access: { surface: 'guide', scopes: READ_SCOPES, roles: ALL_ROLES },
    query: ContextQuerySchema,
    response: SiteContextSchema,
    async handler(_ctx, { query }) {
      return loadSiteContext(deps.db, query.site_id, query.environment, deps.now(), recommend);
    },
  });
}
