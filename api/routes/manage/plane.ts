import type Router from '@koa/router';
import type Koa from 'koa';
import { InstanceKeys } from '../../../shared/auth/instance-keys.ts';
import { KeyResolver, announceRevocation } from '../../../shared/auth/key-resolver.ts';
import type { Infra } from '../../../shared/infra.ts';
import { ALL_ROLES, READ_SCOPES, authenticate, type AccessRule } from '../../http/auth.ts';
import { SurfaceLimits } from '../../http/rate-limit.ts';
import { RouteTable } from '../../http/routes.ts';
import { openApiRouter } from '../../openapi/openapi.routes.ts';
import { platformDocs } from '../../openapi/platform.docs.ts';
import { readRouteDocs } from '../../openapi/read-routes.docs.ts';
import { auditRoutes } from '../audit/audit.routes.ts';
import { deployRoutes } from '../deploys/deploys.routes.ts';
import { authRoutes } from '../auth/auth.routes.ts';
import { deliveryRoutes } from '../deliveries/deliveries.routes.ts';
import { alertRuleRoutes } from './alert-rules/alert-rules.routes.ts';
import { alertRoutes } from './alerts/alerts.routes.ts';
import { annotationRoutes } from './annotations/annotations.routes.ts';
import type { ManageDeps } from './deps.ts';
import { integrationRoutes } from './integrations/integrations.routes.ts';
import { issueRoutes } from './issues/issues.routes.ts';
import { keyRoutes } from './keys/keys.routes.ts';
import { memberRoutes } from './members/members.routes.ts';
import { sdkConfigRoutes } from './sdk-config/sdk-config.routes.ts';
import { siteRoutes } from './sites/sites.routes.ts';
import { usageRoutes } from './usage/usage.routes.ts';
import { webhookRoutes } from './webhooks/webhooks.routes.ts';

export interface ManagementPlane {
  /** Auth for read routes: user tokens of any role, secret keys with query:read, MCP keys with mcp:read; read limit per org. */
  readAuth: Koa.Middleware;
  /** Auth for the guide surface (AI-assistant context): the same credentials as reads, limited per site. */
  guideAuth: Koa.Middleware;
  /** Builds auth for any other rule. */
  auth(rule: AccessRule): Koa.Middleware;
  /** Auth, manage, audit routes and /v1/openapi.json. */
  routers: Router[];
  instanceKeys: InstanceKeys;
}

/** The management plane of the api role: one auth middleware, its rate limits, and every write route. */
export function managementPlane(infra: Infra, opts: { now?: () => Date } = {}): ManagementPlane {
  const db = infra.database.db;
  const config = infra.config;
  const instanceKeys = new InstanceKeys(db, config.FRICTION_SECRET);
  // NOTE: the API looks keys up on every request (TTL 0): a revocation holds at once on every API replica.
  // Only ingest caches keys (hot path); in this process its cache is dropped on revocation too.
  const apiKeys = new KeyResolver(db, 0);
  const limits = new SurfaceLimits(infra.limiter, {
    readPerMin: config.READ_RATE_LIMIT_PER_MIN,
    managePerMin: config.WRITE_RATE_LIMIT_PER_MIN,
    guidePerMin: config.GUIDE_RATE_LIMIT_PER_MIN,
    authPerMin: config.AUTH_RATE_LIMIT_PER_MIN,
  });
  const auth = (rule: AccessRule) => authenticate({ db, keys: apiKeys, instanceKeys, limits }, rule);
  const deps: ManageDeps = {
    db, bus: infra.bus, topology: infra.topology, instanceKeys,
    forgetKeys: async (hashes) => {
      for (const cache of [infra.keys, apiKeys]) for (const h of hashes) cache.invalidateHash(h);
      await announceRevocation(infra.bus, infra.topology.keyRevokedSubject, hashes);
    },
    passwordCost: config.PASSWORD_SCRYPT_N, jwtTtlSec: config.JWT_TTL_SECONDS,
    outbound: { allowPrivateNetworks: config.OUTBOUND_ALLOW_PRIVATE_NETWORKS }, now: opts.now ?? (() => new Date()),
  };
  const table = new RouteTable(auth);
  authRoutes(table, deps, limits);
  for (const add of [siteRoutes, alertRuleRoutes, alertRoutes, issueRoutes, memberRoutes, webhookRoutes, integrationRoutes, sdkConfigRoutes, keyRoutes, annotationRoutes, usageRoutes, deployRoutes]) add(table, deps);
  auditRoutes(table, deps);
  deliveryRoutes(table, deps);
  return {
    readAuth: auth({ surface: 'read', scopes: READ_SCOPES, roles: ALL_ROLES }),
    guideAuth: auth({ surface: 'guide', scopes: READ_SCOPES, roles: ALL_ROLES }),
    auth,
    routers: [table.router, openApiRouter(() => [...table.docs, ...readRouteDocs, ...platformDocs])],
    instanceKeys,
  };
}
