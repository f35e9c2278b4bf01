import type { z } from 'zod';
import { NotFoundError } from '../../../shared/errors.ts';
import type { ReadDeps } from '../../http/deps.ts';
import type { RouteTable } from '../../http/routes.ts';
import type { ScreenshotCapturer } from './capturer.ts';
import { decide } from './decide.ts';
import { imageUrl, presentNoScreenshot, presentScreenshot } from './screenshots.presenter.ts';
import { screenshotPng, storedScreenshot } from './screenshots.queries.ts';
import { ScreenshotImageQuerySchema, ScreenshotQuerySchema, ScreenshotResponseSchema } from './screenshots.schema.ts';

export interface ScreenshotDeps extends ReadDeps {
  /** Undefined: capture is off (SCREENSHOTS=off or no Chromium); stored captures are still served. */
  capturer: ScreenshotCapturer | undefined;
  publicBaseUrl?: string;
}

/** `/query/page-screenshot`: the stored capture, or none with the reason; queues a capture when one is due. */
async function screenshotView(deps: ScreenshotDeps, q: z.infer<typeof ScreenshotQuerySchema>) {
  const row = await storedScreenshot(deps.db, q);
  const d = decide(row, { cached: q.cached === '1', enabled: deps.capturer !== undefined, now: deps.now() });
  const queued = d.queue && deps.capturer ? await deps.capturer.enqueue(q.site_id, q.page, q.device) : undefined;
  if (d.answer === 'stored' && row)
    return presentScreenshot(row, imageUrl(deps.publicBaseUrl, q.site_id, q.page, q.device));
  return presentNoScreenshot(
    queued === 'limit_reached'
      ? 'limit_reached'
      : queued === 'capturing'
        ? 'capturing'
        : d.answer === 'null'
          ? d.reason
          : 'not_captured',
  );
}

/**
 * `/v1/query/page-screenshot` (descriptor or `screenshot: null` with a reason; never waits for a capture) and
 * `/v1/query/page-screenshot/image` (the PNG, same auth).
 */
export function screenshotRoutes(table: RouteTable, deps: ScreenshotDeps): RouteTable {
  table.read({
    path: '/v1/query/page-screenshot',
    tag: 'heatmaps',
    summary:
      'A viewport screenshot of the page (site URL + page) on desktop or mobile: { screenshot: { page, device, width, height, captured_at, image_url } }, or { screenshot: null, reason }',
    description:
      'Never waits for a capture: the first request answers null with reason capturing and queues one in the background. reason is disabled (capture off), capturing, not_captured (cached=1 and none stored), limit_reached (SCREENSHOTS_PER_SITE_PER_DAY), refused (the URL or a redirect reaches a forbidden address) or render_failed (error status, timeout, crash). A capture older than a day is answered and refreshed; a failure is retried after an hour.',
    query: ScreenshotQuerySchema,
    response: ScreenshotResponseSchema,
    handler: (_ctx, { query }) => screenshotView(deps, query),
  });
  return table.read({
    path: '/v1/query/page-screenshot/image',
    tag: 'heatmaps',
    summary: 'The stored PNG of a page screenshot (the image_url of /query/page-screenshot)',
    description: '404 when no successful capture is stored.',
    query: ScreenshotImageQuerySchema,
    contentType: 'image/png',
    async handler(ctx, { query: q }) {
      const png = await screenshotPng(deps.db, q);
      if (!png) throw new NotFoundError('screenshot not found');
      ctx.type = 'image/png';
      ctx.set('cache-control', 'private, max-age=300');
      ctx.body = png;
    },
  });
}
