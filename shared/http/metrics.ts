import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per process; every role registers its metrics here and /metrics serves it. */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

export const httpRequests = new Counter({
  name: 'friction_http_requests_total',
  help: 'HTTP requests by role, route and status',
  labelNames: ['role', 'route', 'status'] as const,
  registers: [registry],
});
export const httpDuration = new Histogram({
  name: 'friction_http_request_duration_seconds',
  help: 'HTTP request duration',
  labelNames: ['role', 'route'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});
