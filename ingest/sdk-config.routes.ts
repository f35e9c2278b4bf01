import { createHash } from 'node:crypto';
import Router from '@koa/router';
import { z } from 'zod';
import type { KeyResolver } from '../shared/auth/key-resolver.ts';
import { ok, parseInput } from '../shared/http/envelope.ts';
import {
  DEFAULT_ENVIRONMENT,
  EnvironmentNameSchema,
  toPublicSdkConfig,
  type SdkConfig,
} from '../shared/tenancy/sdk-config.ts';
import { authenticatePublishable } from './ingest.routes.ts';

export const SdkConfigRequestSchema = z.object({
  key: z.string().min(1).max(200),
  /** Empty (the SDK sends `environment=` when the page named none) means production. */
  environment: z.preprocess((v) => (v === '' ? undefined : v), EnvironmentNameSchema.optional()),
});

export interface SdkConfigRouteDeps {
  keys: KeyResolver;
  sdkConfigs: { get(siteId: string, environment: string): Promise<SdkConfig> };
  /** Cache-Control max-age, seconds. */
  maxAgeS: number;
}

/** RFC 9110 If-None-Match, compared weakly; not ctx.fresh, which a fetch's `Cache-Control: no-cache` defeats. */
const matches = (ifNoneMatch: string, etag: string): boolean =>
  ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);

/**
 * `GET /v1/sdk-config?key=svc_pub_…&environment=production`: the remote config the browser SDK loads at start
 * (sample rate, ignore selectors, app version), keyed by the publishable key that is already public in the
 * page. Public, cacheable by browsers and CDNs for `maxAgeS`, with a strong ETag so a revalidation is a 304.
 * Served by ingest from its config cache: no database read per request.
 */
export function sdkConfigRouter(deps: SdkConfigRouteDeps): Router {
  const router = new Router();
  router.get('/v1/sdk-config', async (ctx) => {
    const q = parseInput(SdkConfigRequestSchema, ctx.query, 'query');
    const key = await authenticatePublishable(deps.keys, q.key);
    const environment = q.environment ?? DEFAULT_ENVIRONMENT;
    const body = ok(toPublicSdkConfig(environment, await deps.sdkConfigs.get(key.siteId, environment)));
    const json = JSON.stringify(body);
    const etag = `"${createHash('sha256').update(json).digest('base64url').slice(0, 22)}"`;
    ctx.set('Cache-Control', `public, max-age=${deps.maxAgeS}`);
    ctx.set('ETag', etag);
    ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
    if (matches(ctx.get('If-None-Match'), etag)) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = json;
  });
  return router;
}
