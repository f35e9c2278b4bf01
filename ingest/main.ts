import { DEFAULT_INGEST_LATENCY_TARGET_MS } from '../shared/config.ts';
import type Router from '@koa/router';
import { databaseReady, limiterReadiness, type Infra } from '../shared/infra.ts';
import type { ReadinessCheck } from '../shared/http/ops-routes.ts';
import { ingestDirectRoute, ingestHandler, ingestRouter } from './ingest.routes.ts';
import type { DirectRoute } from '../shared/http/direct-routes.ts';
import { sdkRouter } from './sdk.routes.ts';
import { sdkConfigRouter } from './sdk-config.routes.ts';
import { SessionQuota } from '../shared/tenancy/quota.ts';
import { LoadShedder } from './admission.ts';

/**
 * The ingest role: its routes and what it needs to be ready. Batches go to the stream; the database is read to
 * resolve publishable keys and count the monthly session quota (both cached, so a request seldom reaches it, but a
 * cold cache does): readiness checks both, so a load balancer does not send traffic that would answer 503.
 */
/**
 * `sharesLoopWithProcessor`: the processor runs in this process too (the embedded default, `friction start`). Its
 * batches then hold the same event loop, which the adaptive shedding would read as ingest's own overload and refuse
 * requests the process keeps up with (measured: 17 % of 1,000 batches/s refused with every event stored); so there,
 * unless INGEST_LATENCY_TARGET_MS is set, the limit is the fixed INGEST_MAX_INFLIGHT, which still bounds memory.
 */
export function ingestRole(
  infra: Infra,
  o: { sharesLoopWithProcessor?: boolean } = {},
): {
  routers: Router[];
  direct: DirectRoute[];
  checks: ReadinessCheck[];
  corsPaths: string[];
} {
  const ingest = ingestHandler({
    keys: infra.keys,
    bus: infra.bus,
    topology: infra.topology,
    limiter: infra.limiter,
    bodyLimitBytes: infra.config.INGEST_BODY_LIMIT_BYTES,
    ratePerMinute: infra.config.INGEST_RATE_LIMIT_PER_MIN,
    unauthPerMinute: infra.config.UNAUTH_RATE_LIMIT_PER_MIN,
    quota: new SessionQuota(infra.database.db, infra.config.QUOTA_CACHE_TTL_MS),
    sdkConfigs: infra.sdkConfigs,
    shedder: new LoadShedder({
      maxInflight: infra.config.INGEST_MAX_INFLIGHT,
      targetMs:
        infra.config.INGEST_LATENCY_TARGET_MS ?? (o.sharesLoopWithProcessor ? 0 : DEFAULT_INGEST_LATENCY_TARGET_MS),
      log: infra.log,
    }),
  });
  return {
    // POST /v1/ingest is served directly (outside Koa's chain); the Koa route answers its other methods and variants.
    direct: [ingestDirectRoute(ingest)],
    routers: [
      ingestRouter(ingest),
      sdkConfigRouter({ keys: infra.keys, sdkConfigs: infra.sdkConfigs, maxAgeS: infra.config.SDK_CONFIG_MAX_AGE_S }),
      // GET /v1/sdk.js and /v1/sdk.mjs: built in the background from here on; never blocks readiness, never throws.
      sdkRouter({ log: infra.log }),
    ],
    checks: [['database', () => databaseReady(infra)], ['bus', () => infra.bus.healthy()], ...limiterReadiness(infra)],
    corsPaths: ['/v1/ingest', '/v1/sdk-config'],
  };
}
