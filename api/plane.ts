import type Router from '@koa/router';
import type Koa from 'koa';
import { InstanceKeys } from '../shared/auth/instance-keys.ts';
import { KeyResolver, announceRevocation } from '../shared/auth/key-resolver.ts';
import { announceSdkConfigChange } from '../shared/tenancy/sdk-config-cache.ts';
import type { Infra } from '../shared/infra.ts';
import { createMailer } from '../shared/mail/mailer.ts';
import { ALL_ROLES, READ_SCOPES, authenticate, type AccessRule } from './http/auth.ts';
import { SurfaceLimits } from './http/rate-limit.ts';
import { RouteTable } from './http/routes.ts';
import { openApiRouter } from './openapi/openapi.routes.ts';
import { mcpRouteDocs } from './mcp/mcp.docs.ts';
import { platformDocs } from './openapi/platform.docs.ts';
import { auditRoutes } from './routes/audit/audit.routes.ts';
import { contextRoutes } from './routes/context/context.routes.ts';
import { siteRecommendations } from './routes/revenue/recommendations.ts';
import { privacyRoutes } from './routes/privacy/privacy.routes.ts';
import { deployRoutes } from './routes/deploys/deploys.routes.ts';
import { authRoutes } from './routes/auth/auth.routes.ts';
import { deliveryRoutes } from './routes/deliveries/deliveries.routes.ts';
import { exploreRoutes } from './routes/explore/explore.routes.ts';
import { alertRuleRoutes } from './routes/alert-rules/alert-rules.routes.ts';
import { alertRoutes } from './routes/alerts/alerts.routes.ts';
import { annotationRoutes } from './routes/annotations/annotations.routes.ts';
import type { ManageDeps } from './http/deps.ts';
import { integrationRoutes } from './routes/integrations/integrations.routes.ts';
import { issueRoutes } from './routes/issues/issues.routes.ts';
import { keyRoutes } from './routes/keys/keys.routes.ts';
import { memberRoutes } from './routes/members/members.routes.ts';
import { sdkConfigRoutes } from './routes/sdk-config/sdk-config.routes.ts';
import { siteRoutes } from './routes/sites/sites.routes.ts';
import { usageRoutes } from './routes/usage/usage.routes.ts';
import { webhookRoutes } from './routes/webhooks/webhooks.routes.ts';

export interface ManagementPlane {
  /** Every API route: the read routes are added to it by api/main.ts. */
  table: RouteTable;
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
  const instanceKeys = new InstanceKeys(db, config);
  // Loaded at start, not on the first login: a weak, missing or misplaced secret is said loudly in the start log.
  void instanceKeys.load().then(
    (s) => {
      for (const w of s.warnings) infra.log.warn({ security: 'instance-secret' }, w);
      if (s.source === 'generated' || s.source === 'moved-from-database') {
        infra.log.warn(
          { security: 'instance-secret', dir: config.FRICTION_DATA_DIR },
          s.source === 'generated'
            ? 'generated the instance secret into FRICTION_DATA_DIR/instance-secret (mode 0600): back it up with the data directory'
            : 'moved the instance secret out of the database into FRICTION_DATA_DIR/instance-secret (mode 0600)',
        );
      }
    },
    (err) => infra.log.error({ err, security: 'instance-secret' }, 'could not load the instance secret'),
  );
  // NOTE: the API looks keys up on every request (TTL 0): a revocation holds at once on every API replica.
  // Only ingest caches keys (hot path); in this process its cache is dropped on revocation too.
  const apiKeys = new KeyResolver(db, 0);
  const limits = new SurfaceLimits(infra.limiter, {
    readPerMin: config.READ_RATE_LIMIT_PER_MIN,
    managePerMin: config.WRITE_RATE_LIMIT_PER_MIN,
    guidePerMin: config.GUIDE_RATE_LIMIT_PER_MIN,
    authPerMin: config.AUTH_RATE_LIMIT_PER_MIN,
    loginPerAccount: config.LOGIN_ATTEMPTS_PER_ACCOUNT,
    unauthPerMin: config.UNAUTH_RATE_LIMIT_PER_MIN,
  });
  const mailer = config.SMTP_URL ? createMailer({ smtpUrl: config.SMTP_URL, from: config.SMTP_FROM }) : null;
  if (!mailer) {
    infra.log.warn(
      { security: 'email' },
      'SMTP_URL is unset: email addresses are NOT verified. Signup makes an account at once and invitations are handed over by whoever creates them; fit for a single team. Set SMTP_URL to verify addresses (docs/security.md).',
    );
  }
  const auth = (rule: AccessRule) =>
    authenticate(
      {
        db,
        keys: apiKeys,
        instanceKeys,
        limits,
        cookies: {
          tokenTtlSec: config.JWT_TTL_SECONDS,
          sessionMaxSec: config.SESSION_MAX_SECONDS,
          publicBaseUrl: config.PUBLIC_BASE_URL,
        },
      },
      rule,
    );
  const deps: ManageDeps = {
    db,
    bus: infra.bus,
    topology: infra.topology,
    instanceKeys,
    forgetKeys: async (hashes) => {
      for (const cache of [infra.keys, apiKeys]) for (const h of hashes) cache.invalidateHash(h);
      await announceRevocation(infra.bus, infra.topology.keyRevokedSubject, hashes);
    },
    sdkConfigChanged: async (siteId) => {
      infra.sdkConfigs.invalidateSite(siteId);
      await announceSdkConfigChange(infra.bus, infra.topology.sdkConfigChangedSubject, siteId);
    },
    passwordCost: config.PASSWORD_SCRYPT_N,
    jwtTtlSec: config.JWT_TTL_SECONDS,
    sessionMaxSec: config.SESSION_MAX_SECONDS,
    mailer,
    publicBaseUrl: config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`,
    outbound: { allowPrivateNetworks: config.OUTBOUND_ALLOW_PRIVATE_NETWORKS },
    now: opts.now ?? (() => new Date()),
    log: infra.log,
  };
  const table = new RouteTable(auth);
  authRoutes(table, deps, limits);
  for (const add of [
    siteRoutes,
    alertRuleRoutes,
    alertRoutes,
    issueRoutes,
    memberRoutes,
    webhookRoutes,
    integrationRoutes,
    sdkConfigRoutes,
    keyRoutes,
    annotationRoutes,
    usageRoutes,
    deployRoutes,
  ])
    add(table, deps);
  contextRoutes(table, deps, siteRecommendations);
  auditRoutes(table, deps);
  privacyRoutes(table, deps);
  deliveryRoutes(table, deps);
  exploreRoutes(table, {
    db,
    kind: infra.database.kind,
    timeoutMs: config.EXPLORE_STATEMENT_TIMEOUT_MS,
    now: deps.now,
  });
  return {
    table,
    guideAuth: auth({ surface: 'guide', scopes: READ_SCOPES, roles: ALL_ROLES }),
    auth,
    routers: [table.router, openApiRouter(() => [...table.docs, ...platformDocs, ...mcpRouteDocs])],
    instanceKeys,
  };
}
