import type { RequestListener, Server } from 'node:http';
import type Router from '@koa/router';
import { httpListener } from '../shared/http/app.ts';
import type { DirectRoute } from '../shared/http/direct-routes.ts';
import { ingestCors } from '../shared/http/cors.ts';
import {
  createGuardedServer,
  DEFAULT_CONNECTION_LIMITS,
  type ConnectionLimits,
} from '../shared/http/connection-guard.ts';
import { opsRouter, type ReadinessCheck } from '../shared/http/ops-routes.ts';
import type { Logger } from '../shared/logger.ts';

export interface RoleHttp {
  routers: Router[];
  /** Routes served outside Koa's chain (each also among `routers`): the ingest hot path. */
  direct?: DirectRoute[];
  checks: ReadinessCheck[];
  corsPaths?: string[];
}

/** Serves the given roles' routes plus /healthz, /readyz, /metrics on one port. Resolves once listening. */
export interface ServeOptions {
  /** TRUSTED_PROXIES: whose X-Forwarded-For is believed. */
  trustedProxies?: string;
  /** METRICS_TOKEN: the Bearer token /metrics requires (unset: loopback only). */
  metricsToken?: string;
  /** A server already listening (opened before start-up: ops/early-listener.ts): the app takes over its requests. */
  early?: { server: Server; serve(app: RequestListener): void };
  /** Timeouts and connection caps (from the configuration: connectionLimits); the early server has its own. */
  connections?: ConnectionLimits;
}

export async function serveRoles(
  name: string,
  roles: RoleHttp[],
  log: Logger,
  port: number,
  host: string,
  opts: ServeOptions = {},
): Promise<Server> {
  const checks = dedupeChecks(roles.flatMap((r) => r.checks));
  const listener = httpListener({
    role: name,
    log,
    trustedProxies: opts.trustedProxies,
    routers: [opsRouter(name, checks, { metricsToken: opts.metricsToken }), ...roles.flatMap((r) => r.routers)],
    before: [ingestCors(roles.flatMap((r) => r.corsPaths ?? []))],
    requestLogLevel: name === 'ingest' ? 'debug' : 'info',
    direct: roles.flatMap((r) => r.direct ?? []),
  });
  if (opts.early) {
    opts.early.serve(listener);
    return opts.early.server;
  }
  const server = createGuardedServer(listener, name, log, opts.connections ?? DEFAULT_CONNECTION_LIMITS).listen(
    port,
    host,
  );
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  return server;
}

function dedupeChecks(checks: ReadinessCheck[]): ReadinessCheck[] {
  const seen = new Map<string, ReadinessCheck>();
  for (const c of checks) if (!seen.has(c[0])) seen.set(c[0], c);
  return [...seen.values()];
}

/** How long requests under way may take to finish once shutdown began, before their connections are closed. */
export const SHUTDOWN_GRACE_MS = 5000;

/**
 * Stops taking connections and resolves once every connection ended: idle keep-alive connections are closed at
 * once, requests under way get `graceMs` to finish, then their connections are closed too. A request that never
 * ends (a /metrics scrape waiting on a stuck collector, a slow client) cannot hold the shutdown past its budget.
 */
export function closeServer(server: Server, graceMs = SHUTDOWN_GRACE_MS): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}
