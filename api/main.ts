import type Router from '@koa/router';
import { databaseReady, type Infra } from '../shared/infra.ts';
import type { ReadinessCheck } from '../shared/http/ops-routes.ts';
import { authenticate } from './http/auth.ts';
import { scoresRouter } from './routes/scores/scores.routes.ts';

/** Scopes that may call read routes: secret keys with query:read, MCP keys with mcp:read. */
export const READ_SCOPES = ['query:read', 'mcp:read'] as const;

/** The api role: read (and later write) routes, ready when the database and the bus answer. */
export function apiRole(infra: Infra): { routers: Router[]; checks: ReadinessCheck[] } {
  const readAuth = authenticate(infra.keys, READ_SCOPES);
  return {
    routers: [scoresRouter({ db: infra.database.db, readAuth })],
    checks: [
      ['database', () => databaseReady(infra)],
      ['bus', () => infra.bus.healthy()],
    ],
  };
}
