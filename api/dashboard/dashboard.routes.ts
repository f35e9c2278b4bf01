import Router from '@koa/router';
import type Koa from 'koa';
import { NotFoundError, UnavailableError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';
import { precompress, type Precompressed } from '../../shared/http/precompressed.ts';
import { buildDashboard, type DashboardBuild } from './build.ts';

/**
 * The dashboard, served by the API role on the API's own origin: `GET /` is index.html (never cached: it names the
 * current build), `GET /assets/<name>-<hash>.<ext>` the hashed files (immutable for a year). Screens are routed in
 * the browser (`/#/…`), so no dashboard path can shadow an API route such as the short-form `/issues`.
 *
 * Every answer carries a strict Content-Security-Policy (scripts, styles and requests to this origin only, no
 * inline code, no framing) and the OWASP secure headers.
 */

export interface DashboardDeps {
  log: Logger;
  /** PUBLIC_BASE_URL: https there adds Strict-Transport-Security. */
  publicBaseUrl: string | undefined;
  /** Dogfooding (off unless a key is set): the page loads Friction's own SDK with this publishable key. */
  dogfood?: { key: string; ingestUrl: string | undefined };
  build?: () => Promise<DashboardBuild>;
  /** How long a request waits for a build still running (default 10 s). */
  waitMs?: number;
}

interface Asset extends Precompressed {
  contentType: string;
}

const compress = async (body: Buffer, contentType: string): Promise<Asset> => ({
  contentType,
  ...(await precompress(body)),
});

const escapeAttr = (v: string): string => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** The Content-Security-Policy of every dashboard answer; `extra` is the dogfood SDK's origin when it is another. */
export function dashboardCsp(extra?: string): string {
  const self = extra ? `'self' ${extra}` : "'self'";
  return [
    "default-src 'none'",
    `script-src ${self}`,
    "style-src 'self'",
    "img-src 'self' data: blob:",
    `connect-src ${self}`,
    "font-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export function indexHtml(b: DashboardBuild, dogfood?: DashboardDeps['dogfood']): string {
  const sdk = dogfood
    ? `\n  <script defer src="${escapeAttr(`${dogfood.ingestUrl ?? ''}/v1/sdk.js`)}" data-key="${escapeAttr(dogfood.key)}"${dogfood.ingestUrl ? ` data-endpoint="${escapeAttr(dogfood.ingestUrl)}"` : ''}></script>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="color-scheme" content="light dark">
  <title>Friction</title>
  <link rel="icon" href="data:,">
${b.css.map((c) => `  <link rel="stylesheet" href="/assets/${c}">`).join('\n')}
${b.preload.map((p) => `  <link rel="modulepreload" href="/assets/${p}">`).join('\n')}
  <script type="module" src="/assets/${b.entry}"></script>${sdk}
</head>
<body>
  <div id="app"><noscript>The Friction dashboard needs JavaScript. The API (/v1/openapi.json, /docs) works without it.</noscript></div>
</body>
</html>
`;
}

/** Headers of every dashboard answer (OWASP Secure Headers Project's list). */
function secureHeaders(ctx: Koa.Context, csp: string, https: boolean): void {
  ctx.set('Content-Security-Policy', csp);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
  ctx.set('Cross-Origin-Embedder-Policy', 'require-corp');
  ctx.set('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), payment=(), usb=(), interest-cohort=()');
  ctx.set('X-Permitted-Cross-Domain-Policies', 'none');
  if (https) ctx.set('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
}

export function dashboardRouter(deps: DashboardDeps): Router {
  const waitMs = deps.waitMs ?? 10_000;
  let built: { index: Buffer; assets: Map<string, Asset> } | null | undefined;
  const t0 = performance.now();
  const pending = Promise.resolve()
    .then(() => (deps.build ?? buildDashboard)())
    .then(async (b) => {
      const assets = new Map<string, Asset>();
      for (const f of b.files) assets.set(f.name, await compress(f.body, f.contentType));
      deps.log.info({ files: b.files.length, ms: Math.round(performance.now() - t0) }, 'dashboard built');
      return (built = { index: Buffer.from(indexHtml(b, deps.dogfood)), assets });
    })
    .catch((err: unknown) => {
      deps.log.error({ err }, 'dashboard build failed: / answers 503 until the api role restarts');
      return (built = null);
    });
  const current = async () => {
    if (built !== undefined) return built;
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), waitMs)));
    try {
      return await Promise.race([pending, gaveUp]);
    } finally {
      clearTimeout(timer);
    }
  };
  const dogfoodOrigin = deps.dogfood?.ingestUrl ? new URL(deps.dogfood.ingestUrl).origin : undefined;
  const csp = dashboardCsp(dogfoodOrigin);
  const https = deps.publicBaseUrl?.startsWith('https:') ?? false;
  const ready = async (ctx: Koa.Context) => {
    secureHeaders(ctx, csp, https || ctx.secure);
    const b = await current();
    if (!b) {
      ctx.set('Cache-Control', 'no-store');
      throw new UnavailableError(
        b === null ? 'the dashboard failed to build; see the api log' : 'the dashboard is still being built',
        b === null ? 300 : 1,
      );
    }
    return b;
  };

  const router = new Router();
  router.get('/', async (ctx) => {
    const b = await ready(ctx);
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = b.index;
  });
  router.get('/assets/:name', async (ctx) => {
    const b = await ready(ctx);
    const a = b.assets.get(ctx.params.name!);
    if (!a) throw new NotFoundError('no such dashboard file (a page of an older build asks for it: reload)');
    const coding = ctx.acceptsEncodings('br') ? 'br' : ctx.acceptsEncodings('gzip') ? 'gzip' : 'identity';
    ctx.set('Vary', 'Accept-Encoding');
    // The name carries the content hash: these bytes can never change under it.
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.type = a.contentType;
    if (coding !== 'identity') ctx.set('Content-Encoding', coding);
    ctx.body = a[coding];
  });
  return router;
}
