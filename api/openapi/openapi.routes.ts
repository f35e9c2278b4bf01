import { readFile } from 'node:fs/promises';
import { gzip } from 'node:zlib';
import { promisify } from 'node:util';
import Router from '@koa/router';
import { openApiDocument } from './document.ts';
import type { RouteDoc } from './route-doc.ts';

/**
 * Scalar's standalone bundle, from the npm package (no CDN): the package does not export the file, so it is
 * found beside its main entry.
 */
const SCALAR_BUNDLE = new URL('./browser/standalone.js', import.meta.resolve('@scalar/api-reference'));

/**
 * The docs page: Scalar rendering /v1/openapi.json. Fonts are the browser's own (Scalar would fetch its default
 * fonts from its CDN) and nothing else leaves the page but requests to this server.
 */
const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Friction API</title>
</head>
<body>
  <div id="app"></div>
  <script src="/docs/scalar.js"></script>
  <script>
    Scalar.createApiReference('#app', { url: '/v1/openapi.json', withDefaultFonts: false, hideClientButton: false, telemetry: false });
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
    ctx.set('Content-Security-Policy', "default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'");
    ctx.body = DOCS_HTML;
  });
  router.get('/docs/scalar.js', async (ctx) => {
    bundle ??= readFile(SCALAR_BUNDLE).then(async (plain) => ({ plain, gz: await promisify(gzip)(plain) }));
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
