import type { RequestListener, Server } from 'node:http';
import type Router from '@koa/router';
import { createHttpApp } from '../shared/http/app.ts';
import { ingestCors } from '../shared/http/cors.ts';
import { opsRouter, type ReadinessCheck } from '../shared/http/ops-routes.ts';
import type { Logger } from '../shared/logger.ts';

export interface RoleHttp {
  routers: Router[];
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
}

export async function serveRoles(name: string, roles: RoleHttp[], log: Logger, port: number, host: string, opts: ServeOptions = {}): Promise<Server> {
  const checks = dedupeChecks(roles.flatMap((r) => r.checks));
  const app = createHttpApp({
    role: name,
    log,
    trustedProxies: opts.trustedProxies,
    routers: [opsRouter(name, checks, { metricsToken: opts.metricsToken }), ...roles.flatMap((r) => r.routers)],
    before: [ingestCors(roles.flatMap((r) => r.corsPaths ?? []))],
    requestLogLevel: name === 'ingest' ? 'debug' : 'info',
  });
  if (opts.early) {
    opts.early.serve(app.callback());
    return opts.early.server;
  }
  const server = app.listen(port, host);
  // Keep-alive longer than typical load balancers' idle timeout, so they close first (no reset races).
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  return server;
}

function dedupeChecks(checks: ReadinessCheck[]): ReadinessCheck[] {
  const seen = new Map<string, ReadinessCheck>();
  for (const c of checks) if (!seen.has(c[0])) seen.set(c[0], c);
  return [...seen.values()];
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
