import type { z } from 'zod';
import type { ScreenshotResponseSchema } from './screenshots.schema.ts';
import type { StoredScreenshot } from './screenshots.queries.ts';
import type { ScreenshotReason } from './screenshots.schema.ts';

/** The image route's URL for a capture: a path on this API, absolute when PUBLIC_BASE_URL is set. */
export function imageUrl(baseUrl: string | undefined, siteId: string, page: string, device: string): string {
  const q = new URLSearchParams({ site_id: siteId, page, device });
  return `${(baseUrl ?? '').replace(/\/+$/, '')}/v1/query/page-screenshot/image?${q.toString()}`;
}

/** `/query/page-screenshot` with a stored capture. */
export function presentScreenshot(row: StoredScreenshot, image_url: string): z.output<typeof ScreenshotResponseSchema> {
  return {
    screenshot: {
      page: row.page,
      device: row.device,
      width: row.width,
      height: row.height,
      captured_at: row.captured_at.toISOString(),
      image_url,
    },
  };
}

/** `/query/page-screenshot` without one, and why. */
export function presentNoScreenshot(reason: ScreenshotReason): z.output<typeof ScreenshotResponseSchema> {
  return { screenshot: null, reason };
}
