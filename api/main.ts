import type Router from '@koa/router';
import { databaseReady, type Infra } from '../shared/infra.ts';
import type { ReadinessCheck } from '../shared/http/ops-routes.ts';
import { managementPlane } from './routes/manage/plane.ts';
import { scoresRouter } from './routes/scores/scores.routes.ts';
import { issuesRouter } from './routes/issues/issues.routes.ts';
import { elementsRouter } from './routes/elements/elements.routes.ts';
import { heuristicsRouter } from './routes/heuristics/heuristics.routes.ts';
import { alertsRouter } from './routes/alerts/alerts.routes.ts';
import { rawRouter } from './routes/raw/raw.routes.ts';
import { deploysRouter } from './routes/deploys/deploys.routes.ts';

/** Scopes that may call read routes: secret keys with query:read, MCP keys with mcp:read. */
export { READ_SCOPES } from './http/auth.ts';

/** The api role: read, write, auth and audit routes, ready when the database and the bus answer. */
export function apiRole(infra: Infra): { routers: Router[]; checks: ReadinessCheck[] } {
  // Auth (keys and user tokens), rate limits, every /manage, /auth and audit route, and /v1/openapi.json.
  const plane = managementPlane(infra);
  const readAuth = plane.readAuth;
  return {
    routers: [
      scoresRouter({ db: infra.database.db, readAuth }),
      issuesRouter({ db: infra.database.db, readAuth }),
      elementsRouter({ db: infra.database.db, readAuth }),
      alertsRouter({ db: infra.database.db, readAuth }),
      rawRouter({ db: infra.database.db, readAuth }),
      deploysRouter({ db: infra.database.db, readAuth }),
      heuristicsRouter({ readAuth }),
      ...plane.routers,
    ],
    checks: [
      ['database', () => databaseReady(infra)],
      ['bus', () => infra.bus.healthy()],
    ],
  };
}
