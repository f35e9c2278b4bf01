import Router from '@koa/router';
import type Koa from 'koa';
import { UnavailableError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { precompress, type Precompressed } from '../shared/http/precompressed.ts';
import { buildSdk } from './sdk/build.ts';

/**
 * `GET /v1/sdk.js` (the script-tag build, global `Friction`) and `GET /v1/sdk.mjs` (the ESM build): the browser SDK,
 * built once when ingest starts and served from memory.
 *
 * Caching: `?v=<version>` equal to the running build is immutable for a year, since that URL can only ever mean
 * these bytes. Anything else (the plain `<script src=".../v1/sdk.js">` most sites paste, or a stale `?v=`) is cached
 * for SDK_SHORT_MAX_AGE_S only, so a deploy reaches every site within minutes; the strong ETag makes the
 * revalidations that follow a 304 with no body.
 *
 * Failure: the build runs in the background and never blocks or crashes the role, because ingesting events matters
 * more than serving the script. Requests made while it still runs wait for it (at most `waitMs`); if it failed, the
 * failure is logged once and both routes answer 503. Readiness does not depend on it: taking ingest out of the load
 * balancer over a script file would lose events.
 */

/** Cache lifetime of an unversioned (or stale-versioned) request, seconds. */
export const SDK_SHORT_MAX_AGE_S = 300;
const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Retry-After of the 503 after a failed build: a restart (a deploy) is what fixes it, not a quick retry. */
const FAILED_RETRY_AFTER_S = 300;

export type SdkBuild = () => Promise<{ esm: string; iife: string; version: string }>;

export interface SdkRouteDeps {
  log: Logger;
  /** What builds the SDK (default: buildSdk, esbuild and terser over ingest/sdk/src). */
  build?: SdkBuild;
  /** How long a request waits for a build still running before a 503 (default 5 s; esbuild takes 0.15-0.25 s, and a first terser pass of new code 1.5-3.3 s more on a busy machine). */
  waitMs?: number;
}

interface Built {
  version: string;
  js: Precompressed;
  mjs: Precompressed;
}

const asset = (code: string): Promise<Precompressed> => precompress(Buffer.from(code, 'utf8'), { text: true });

/** Starts the build now; the returned promise never rejects (null: the build failed, and that was logged). */
function startBuild(deps: SdkRouteDeps): Promise<Built | null> {
  const t0 = performance.now();
  return Promise.resolve()
    .then(() => (deps.build ?? buildSdk)())
    .then(async (b) => {
      if (!b || typeof b.version !== 'string' || !/^[\w.+-]+$/.test(b.version))
        throw new Error(`the build returned an unusable version: ${JSON.stringify(b?.version)}`);
      const [js, mjs] = await Promise.all([asset(b.iife), asset(b.esm)]);
      deps.log.info(
        {
          version: b.version,
          js_bytes: js.identity.length,
          js_gzip_bytes: js.gzip.length,
          js_br_bytes: js.br.length,
          ms: Math.round(performance.now() - t0),
        },
        'browser SDK built',
      );
      return { version: b.version, js, mjs };
    })
    .catch((err: unknown) => {
      deps.log.error(
        { err },
        'browser SDK build failed: GET /v1/sdk.js and /v1/sdk.mjs answer 503 until ingest restarts',
      );
      return null;
    });
}

/** The strong ETag of one coding: different bytes must never share a strong validator. */
const etagFor = (version: string, coding: keyof Precompressed): string =>
  `"${version}${coding === 'identity' ? '' : `+${coding}`}"`;

/**
 * RFC 9110 §13.1.2: If-None-Match is `*` or a list of entity tags, compared weakly (a `W/` prefix is ignored).
 * Not Koa's ctx.fresh: it also treats a request's `Cache-Control: no-cache` as "send it all", which fetch() adds to
 * every request carrying If-None-Match, so no fetch-based client could ever get its 304.
 */
function notModified(ifNoneMatch: string, etag: string): boolean {
  if (!ifNoneMatch) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

export function sdkRouter(deps: SdkRouteDeps): Router {
  const waitMs = deps.waitMs ?? 5000;
  // undefined while the build runs; null once it failed.
  let built: Built | null | undefined;
  const pending = startBuild(deps).then((b) => (built = b));

  const current = async (): Promise<Built | null | undefined> => {
    if (built !== undefined) return built;
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), waitMs);
    });
    try {
      return await Promise.race([pending, gaveUp]);
    } finally {
      clearTimeout(timer);
    }
  };

  const serve =
    (pick: (b: Built) => Precompressed): Koa.Middleware =>
    async (ctx) => {
      // A static public file: any page may load it, with or without crossorigin / as a module, and under COEP.
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
      ctx.set('X-Content-Type-Options', 'nosniff');
      const b = await current();
      if (!b) {
        // An error must not be cached in place of the script (by the browser or a CDN).
        ctx.set('Cache-Control', 'no-store');
        throw b === null
          ? new UnavailableError('the browser SDK failed to build; see the ingest log', FAILED_RETRY_AFTER_S)
          : new UnavailableError('the browser SDK is still being built', 1);
      }
      const file = pick(b);
      // One coding at a time, smallest first: asked together, the negotiator follows the client's order, and browsers
      // list gzip before br. Neither acceptable (even under `identity;q=0`): plain bytes are still the best answer.
      const coding: keyof Precompressed = ctx.acceptsEncodings('br')
        ? 'br'
        : ctx.acceptsEncodings('gzip')
          ? 'gzip'
          : 'identity';
      ctx.set('Vary', 'Accept-Encoding');
      ctx.set('Cache-Control', ctx.query.v === b.version ? IMMUTABLE : `public, max-age=${SDK_SHORT_MAX_AGE_S}`);
      ctx.set('ETag', etagFor(b.version, coding));
      if (notModified(ctx.get('If-None-Match'), etagFor(b.version, coding))) {
        ctx.status = 304;
        return;
      }
      if (coding !== 'identity') ctx.set('Content-Encoding', coding);
      ctx.type = 'text/javascript; charset=utf-8';
      ctx.body = file[coding];
    };

  const router = new Router();
  router.get(
    '/v1/sdk.js',
    serve((b) => b.js),
  );
  router.get(
    '/v1/sdk.mjs',
    serve((b) => b.mjs),
  );
  return router;
}
