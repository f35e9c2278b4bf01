import Router from '@koa/router';
import typeis from 'type-is';
import { IngestBatchSchema } from '../shared/contracts/ingest.ts';
import { encode } from '../shared/contracts/codec.ts';
import type { Topology } from '../shared/contracts/subjects.ts';
import type { KeyResolver } from '../shared/auth/key-resolver.ts';
import type { KeyRecord } from '../shared/db/queries/api-keys.queries.ts';
import type { Bus } from '../shared/bus/bus.ts';
import type { RateLimiter } from '../shared/limiter/limiter.ts';
import {
  ForbiddenError,
  RateLimitedError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
  ValidationError,
} from '../shared/errors.ts';
import { ok, parseInput } from '../shared/http/envelope.ts';
import { parseJson, readTextBody } from '../shared/http/body.ts';
import { setRateLimitHeaders } from '../shared/http/rate-limit-headers.ts';
import type { DirectAnswer, DirectHandler, DirectRequest, DirectRoute } from '../shared/http/direct-routes.ts';
import { checkTimestamps, correctClockSkew, toBatchMessage } from './normalize-batch.ts';
import { DEFAULT_ENVIRONMENT, ignoredSelector, type SdkConfig } from '../shared/tenancy/sdk-config.ts';
import type { LoadShedder } from './admission.ts';

export interface IngestDeps {
  keys: KeyResolver;
  bus: Bus;
  topology: Topology;
  limiter: RateLimiter;
  bodyLimitBytes: number;
  /** Requests per minute per publishable key (spec: 10,000). */
  ratePerMinute: number;
  /** Requests per minute per client IP without a valid key (UNAUTH_RATE_LIMIT_PER_MIN); beyond it 429 instead of 401. */
  unauthPerMinute?: number;
  /** Monthly session allowance of the key's org (plan limit): over it, 429 quota_exceeded. */
  quota?: { enforce(orgId: string): Promise<void> };
  /** The site's SDK config (cached): signals on its ignore_selectors are dropped here too, for SDKs that loaded an older config. */
  sdkConfigs?: { get(siteId: string, environment: string): Promise<SdkConfig> };
  /** Refuses requests beyond what this process can serve (503 + Retry-After) before any work: see admission.ts. */
  shedder?: LoadShedder;
  now?: () => number;
}

export type PublishableKey = KeyRecord & { siteId: string };

/** A publishable key with scope ingest:write, of a site that is not paused; 401/403 otherwise. */
export async function authenticatePublishable(keys: KeyResolver, key: string): Promise<PublishableKey> {
  const rec = await keys.resolve(key);
  if (!rec) throw new UnauthorizedError('unknown or revoked publishable key');
  if (rec.keyType !== 'publishable' || !rec.scopes.includes('ingest:write') || !rec.siteId) {
    throw new ForbiddenError('ingest needs a publishable key with scope ingest:write');
  }
  // A paused site collects nothing. 403 rather than a silent 202: the SDK drops a refused batch without retrying.
  if (rec.siteStatus === 'paused')
    throw new ForbiddenError(`site ${rec.siteId} is paused: ingest resumes when its status is set back to active`);
  return rec as PublishableKey;
}

/** The key of an `Authorization: Bearer <key>` header; undefined without the header, 401 when it is malformed. */
function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)$/i.exec(header);
  if (!m) throw new UnauthorizedError('Authorization header must be "Bearer <publishable key>"');
  return m[1];
}

/**
 * `POST /v1/ingest`: SDK batches in, one durable stream publish per batch, 202 only after the stream acked. One
 * handler, served two ways: directly from node:http (the hot path: `ingestDirectRoute`) and as the Koa route
 * (`ingestRouter`), which answers what the direct route does not match (405 on other methods, case variants).
 */
export function ingestHandler(deps: IngestDeps): DirectHandler {
  const now = deps.now ?? Date.now;
  const authenticate = (key: string): Promise<PublishableKey> => authenticatePublishable(deps.keys, key);

  const accept = async ({ req }: DirectRequest, set: (name: string, value: string) => void): Promise<DirectAnswer> => {
    // Beacons cannot set headers: they send text/plain with the key in the body.
    if (!typeis(req, ['application/json', 'text/plain']))
      throw new UnsupportedMediaTypeError('Content-Type must be application/json or text/plain');
    const headerKey = bearer(req.headers.authorization);
    let key = headerKey ? await authenticate(headerKey) : undefined;
    const raw = parseJson(await readTextBody(req, deps.bodyLimitBytes), { replaceUnstorable: true });
    if (!key) {
      const bodyKey = (raw as { key?: unknown } | null)?.key;
      if (typeof bodyKey !== 'string')
        throw new UnauthorizedError('a publishable key is required (Authorization header or body field key)');
      key = await authenticate(bodyKey);
    }

    const limit = await deps.limiter.hit(`ingest:${key.id}`, deps.ratePerMinute, 60_000);
    setRateLimitHeaders(set, limit, 60_000);
    if (!limit.allowed)
      throw new RateLimitedError(
        limit.retryAfterSec,
        `ingest limit of ${deps.ratePerMinute} requests per minute per key exceeded`,
      );
    await deps.quota?.enforce(key.orgId);

    const batch = parseInput(IngestBatchSchema, raw, 'batch');
    const receivedAt = now();
    correctClockSkew(batch, receivedAt);
    const tsProblems = checkTimestamps(batch, receivedAt);
    if (tsProblems.length > 0)
      throw new ValidationError(`invalid batch: ${tsProblems[0].path}: ${tsProblems[0].message}`, tsProblems);

    if (deps.sdkConfigs) {
      const config = await deps.sdkConfigs.get(key.siteId, batch.context.environment ?? DEFAULT_ENVIRONMENT);
      // segment.app_version tags the sessions of SDKs that do not name their build (the page's own value wins).
      if (!batch.context.app_version && config.segment.app_version)
        batch.context.app_version = config.segment.app_version;
      // Signals on elements the config ignores: dropped here for SDKs still running with an older config (a page
      // loaded before the change). They are neither stored nor counted as accepted or duplicate.
      if (config.ignore_selectors.length > 0) {
        batch.events = batch.events.filter(
          (e) => !(e.type === 'signal' && e.selector && ignoredSelector(e.selector, config.ignore_selectors)),
        );
        if (batch.events.length === 0) return { status: 202, body: ok({ accepted: 0, duplicates: 0 }) };
      }
    }

    const { message, inBatchDuplicates } = toBatchMessage(batch, key, receivedAt);
    const published = await deps.bus.publish(deps.topology.eventSubject(key.siteId), encode(message), message.batch_id);
    return {
      status: 202,
      body: published.duplicate
        ? ok({ accepted: 0, duplicates: batch.events.length })
        : ok({ accepted: message.events.length, duplicates: inBatchDuplicates }),
    };
  };

  return async (request, set) => {
    // First of all: a refused request costs no body read, key lookup or parse.
    const release = deps.shedder?.admit();
    try {
      return await accept(request, set);
    } catch (err) {
      // Requests that present no valid key count against their address (shared with the API's budget): key guessing
      // is bounded.
      if (err instanceof UnauthorizedError && deps.unauthPerMinute) {
        const d = await deps.limiter.hit(`unauth:${request.ip}`, deps.unauthPerMinute, 60_000);
        if (!d.allowed)
          throw new RateLimitedError(
            d.retryAfterSec,
            `too many unauthenticated requests from this address (${deps.unauthPerMinute} per minute)`,
          );
      }
      throw err;
    } finally {
      release?.();
    }
  };
}

export const INGEST_PATH = '/v1/ingest';

/** The ingest handler as a direct route (outside Koa's chain), with the ingest CORS fields. */
export function ingestDirectRoute(handle: DirectHandler): DirectRoute {
  return { method: 'POST', path: INGEST_PATH, cors: true, handle };
}

/** The same handler as a Koa route. */
export function ingestRouter(handle: DirectHandler): Router {
  const router = new Router();
  router.post(INGEST_PATH, async (ctx) => {
    const answer = await handle({ req: ctx.req, ip: ctx.ip }, (name, value) => ctx.set(name, value));
    ctx.status = answer.status;
    ctx.body = answer.body;
  });
  return router;
}
