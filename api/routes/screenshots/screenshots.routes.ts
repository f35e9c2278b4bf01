import Router from '@koa/router';
import type Koa from 'koa';
import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { NotFoundError } from '../../../shared/errors.ts';
import { ok } from '../../../shared/http/envelope.ts';
import { siteQuery } from '../../http/auth.ts';
import type { ScreenshotCapturer } from './capturer.ts';
import { decide } from './decide.ts';
import { imageUrl, presentNoScreenshot, presentScreenshot } from './screenshots.presenter.ts';
import { screenshotPng, storedScreenshot } from './screenshots.queries.ts';
import { ScreenshotImageQuerySchema, ScreenshotQuerySchema } from './screenshots.schema.ts';

export interface ScreenshotDeps {
  db: Kysely<Database>;
  readAuth: Koa.Middleware;
  /** Undefined: capture is off (SCREENSHOTS=off or no Chromium); stored captures are still served. */
  capturer: ScreenshotCapturer | undefined;
  publicBaseUrl?: string;
  now?: () => Date;
}

/**
 * `/v1/query/page-screenshot` (descriptor or `screenshot: null` with a reason; never waits for a capture) and
 * `/v1/query/page-screenshot/image` (the PNG, same auth).
 */
export function screenshotsRouter(deps: ScreenshotDeps): Router {
  const now = deps.now ?? (() => new Date());
  const router = new Router();
  router.get('/v1/query/page-screenshot', deps.readAuth, async (ctx) => {
    const q = siteQuery(ctx, ScreenshotQuerySchema);
    const row = await storedScreenshot(deps.db, q.site_id, q.page, q.device);
    const d = decide(row, { cached: q.cached === '1', enabled: deps.capturer !== undefined, now: now() });
    const queued = d.queue && deps.capturer ? await deps.capturer.enqueue(q.site_id, q.page, q.device) : undefined;
    if (d.answer === 'stored' && row) {
      ctx.body = ok(presentScreenshot(row, imageUrl(deps.publicBaseUrl, q.site_id, q.page, q.device)));
      return;
    }
    ctx.body = ok(
      presentNoScreenshot(
        queued === 'limit_reached'
          ? 'limit_reached'
          : queued === 'capturing'
            ? 'capturing'
            : d.answer === 'null'
              ? d.reason
              : 'not_captured',
      ),
    );
  });
  router.get('/v1/query/page-screenshot/image', deps.readAuth, async (ctx) => {
    const q = siteQuery(ctx, ScreenshotImageQuerySchema);
    const png = await screenshotPng(deps.db, q.site_id, q.page, q.device);
    if (!png) throw new NotFoundError('screenshot not found');
    ctx.type = 'image/png';
    ctx.set('cache-control', 'private, max-age=300');
    ctx.body = png;
  });
  return router;
}
