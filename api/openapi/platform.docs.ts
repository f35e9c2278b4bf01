import { z } from 'zod';
import { IngestBatchSchema } from '../../shared/contracts/ingest.ts';
import { EnvironmentNameSchema } from '../../shared/tenancy/sdk-config.ts';
import type { RouteDoc } from './route-doc.ts';

/**
 * Routes served outside the API role's route tables: ingest, the operations routes every role serves, and
 * this document itself. Their handlers live in ingest/ and shared/http/; the schemas are the ones they use.
 */
export const platformDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/v1/ingest',
    tag: 'ingest',
    status: 202,
    auth: { kind: 'publishable' },
    summary: 'Send a batch of SDK events (publishable key in the header, or in the body field key for beacons)',
    description:
      'application/json or text/plain, gzip/deflate accepted, 1 MiB; 10,000 requests per minute per key. 202 only after the stream stored the batch.',
    body: IngestBatchSchema,
    response: z.object({ accepted: z.number().int(), duplicates: z.number().int() }),
  },
  ...(['/v1/sdk.js', '/v1/sdk.mjs'] as const).map(
    (path): RouteDoc => ({
      method: 'get',
      path,
      tag: 'ingest',
      auth: { kind: 'public' },
      contentType: 'text/javascript',
      summary: path.endsWith('.mjs')
        ? 'The browser SDK, ES module build'
        : 'The browser SDK, script-tag build (global Friction; starts itself with data-key)',
      description:
        'Built when ingest starts (ingest/sdk.routes.ts). With ?v= equal to the running build version (the strong ETag, unquoted): ' +
        'Cache-Control immutable for a year; otherwise max-age=300, so unversioned tags pick up new builds. 304 on If-None-Match; ' +
        'br and gzip by Accept-Encoding; Access-Control-Allow-Origin *. 503 while the build is still running or when it failed.',
    }),
  ),
  {
    method: 'get',
    path: '/v1/sdk-config',
    tag: 'ingest',
    auth: { kind: 'public' },
    summary: 'The remote config the browser SDK loads at start, keyed by the publishable key (public, cacheable)',
    description:
      'Cache-Control public, max-age=60 (SDK_CONFIG_MAX_AGE_S); strong ETag, 304 on If-None-Match; Access-Control-Allow-Origin *. ' +
      'Unknown key 401, not a publishable key or a paused site 403, bad environment 400.',
    query: z.object({
      key: z.string().describe('publishable key, svc_pub_…'),
      environment: EnvironmentNameSchema.optional().describe('default production'),
    }),
    response: z.object({
      environment: z.string(),
      sample_rate: z.number().min(0).max(1),
      ignore_selectors: z.array(z.string()),
      segment: z.object({ app_version: z.string().nullable() }),
    }),
  },
  {
    method: 'get',
    path: '/healthz',
    tag: 'operations',
    auth: { kind: 'public' },
    summary: 'The process is alive, and which version it runs',
    response: z.object({
      status: z.literal('ok'),
      role: z.string(),
      version: z.string().describe('the package version of this build'),
    }),
  },
  {
    method: 'get',
    path: '/readyz',
    tag: 'operations',
    auth: { kind: 'public' },
    summary: 'The database and the bus answer (503 otherwise)',
    description:
      'checks: database and bus (`down` makes the answer 503), and on ingest and api with REDIS_URL set, redis: `degraded` while Redis is unreachable (rate limits then hold per replica; still 200).',
    response: z.object({
      status: z.literal('ready'),
      role: z.string(),
      checks: z.record(z.string(), z.enum(['ok', 'down', 'degraded'])),
    }),
  },
  {
    method: 'get',
    path: '/metrics',
    tag: 'operations',
    auth: { kind: 'public' },
    summary: 'Prometheus metrics',
    description:
      'Direct loopback requests only, unless METRICS_TOKEN is set: then Authorization: Bearer <METRICS_TOKEN> from anyone (401 otherwise).',
    contentType: 'text/plain',
  },
  {
    method: 'get',
    path: '/v1/openapi.json',
    tag: 'operations',
    auth: { kind: 'public' },
    summary: 'This description (OpenAPI 3.1)',
    contentType: 'application/json',
  },
  {
    method: 'get',
    path: '/',
    tag: 'operations',
    auth: { kind: 'public' },
    contentType: 'text/html',
    summary: 'The dashboard (api/dashboard): a page that signs in with the browser session cookie and reads this API',
    description: 'Cache-Control no-store; strict Content-Security-Policy and secure headers (docs/dashboard.md).',
  },
  {
    method: 'get',
    path: '/assets/{name}',
    tag: 'operations',
    auth: { kind: 'public' },
    contentType: 'text/javascript',
    params: z.object({ name: z.string().describe('a file name index.html gives, e.g. main-3YXKUWSR.js') }),
    summary:
      "The dashboard's scripts and styles, named by content hash (immutable for a year; br and gzip by Accept-Encoding)",
  },
  {
    method: 'get',
    path: '/docs',
    tag: 'operations',
    auth: { kind: 'public' },
    summary: 'This description as a browsable page (Scalar, served locally)',
    contentType: 'text/html',
  },
  {
    method: 'get',
    path: '/demo-shop',
    tag: 'operations',
    auth: { kind: 'public' },
    contentType: 'text/html',
    summary:
      "The demo tenant's site: a small shop whose pages the demo traffic visits (its screenshots work out of the box)",
  },
  {
    method: 'get',
    path: '/demo-shop/:page',
    tag: 'operations',
    auth: { kind: 'public' },
    contentType: 'text/html',
    params: z.object({ page: z.enum(['products', 'cart', 'checkout', 'signup', 'blog']) }),
    summary: 'One page of the demo shop (404 for a page it does not have)',
  },
  {
    method: 'get',
    path: '/docs/scalar.js',
    tag: 'operations',
    auth: { kind: 'public' },
    summary: 'The Scalar bundle the docs page loads (vendored in the repository, no CDN)',
    contentType: 'text/javascript',
  },
];
