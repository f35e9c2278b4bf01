import { readFile } from 'node:fs/promises';
import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import Router from '@koa/router';
import { openApiDocument } from './document.ts';
import type { RouteDoc } from './route-doc.ts';

/**
 * Scalar's standalone bundle, vendored gzipped (api/openapi/vendor/update.ts): one static file instead of the
 * npm package and its Vue application's dependencies in every production install. No CDN.
 */
const SCALAR_BUNDLE_GZ = new URL('./vendor/scalar-standalone.js.gz', import.meta.url);

/**
 * Scalar's options for a self-hosted page under a strict CSP: its hosted-service features off (the AI agent, which
 * calls Scalar's servers; the developer toolbar with its Share and Deploy menus), fonts the browser's own (Scalar
 * would fetch its defaults from its CDN), no telemetry. Nothing leaves the page but requests to this server.
 */
export const SCALAR_OPTIONS = {
  url: '/v1/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  showDeveloperTools: 'never',
  hideClientButton: false,
  persistAuth: false,
} as const;

/** The docs page: Scalar rendering /v1/openapi.json. */
const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Friction API</title>
  <link rel="icon" href="data:,">
</head>
<body>
  <div id="app"></div>
  <script src="/docs/scalar.js"></script>
  <script>
    Scalar.createApiReference('#app', ${JSON.stringify(SCALAR_OPTIONS)});
  </script>
</body>
</html>
`;

/**
 * `GET /v1/openapi.json`: generated once, on first request, from the routes' own schemas. `GET /docs`: the same
 * document rendered by Scalar, served from this process (`/docs/scalar.js`, gzip when asked, cached by version).
 * All public.
 */
export function openApiRouter(docs: () => readonly RouteDoc[]): Router {
  let body: string | undefined;
  let bundle: Promise<{ plain: Buffer; gz: Buffer }> | undefined;
  const router = new Router();
  router.get('/v1/openapi.json', (ctx) => {
    body ??= JSON.stringify(openApiDocument(docs()));
    ctx.type = 'application/json';
    ctx.body = body;
  });
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set(
      'Content-Security-Policy',
      "default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'",
    );
    ctx.body = DOCS_HTML;
  });
  router.get('/docs/scalar.js', async (ctx) => {
    bundle ??= readFile(SCALAR_BUNDLE_GZ).then(async (gz) => ({ gz, plain: await promisify(gunzip)(gz) }));
    const b = await bundle;
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.set('Vary', 'Accept-Encoding');
    if (ctx.acceptsEncodings('gzip') === 'gzip') {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = b.gz;
    } else ctx.body = b.plain;
  });
  return router;
}
