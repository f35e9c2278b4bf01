import type { StoredScreenshot } from './screenshots.queries.ts';
import type { ScreenshotReason } from './screenshots.schema.ts';

/** A good capture older than this is answered and refreshed in the background by the next uncached request. */
export const REFRESH_AFTER_MS = 24 * 3600_000;
/**
 * A failed capture is answered as failed for this long before an uncached request tries again, unless the site's
 * URL changed since (the usual fix): then the next uncached request tries at once.
 */
export const RETRY_FAILED_AFTER_MS = 3600_000;

/** What one request answers from what is stored: the stored capture or a reason, and whether to queue a capture. */
export type Decision =
  | { answer: 'stored'; queue: boolean }
  | { answer: 'null'; reason: ScreenshotReason; queue: boolean };

/**
 * Pure: `cached` never queues; capture off answers what is stored and `disabled` otherwise; a missing capture is
 * queued (the caller turns `queue` into `capturing` or `limit_reached`).
 */
export function decide(
  row: StoredScreenshot | undefined,
  opts: { cached: boolean; enabled: boolean; now: Date },
): Decision {
  const mayQueue = !opts.cached && opts.enabled;
  const age = row ? opts.now.getTime() - row.captured_at.getTime() : 0;
  if (row && row.failure === null) return { answer: 'stored', queue: mayQueue && age >= REFRESH_AFTER_MS };
  if (row && row.failure !== null) {
    const urlChanged = row.source_url !== row.site_url;
    const retry = mayQueue && (urlChanged || age >= RETRY_FAILED_AFTER_MS);
    return { answer: 'null', reason: row.failure as ScreenshotReason, queue: retry };
  }
  if (opts.cached) return { answer: 'null', reason: 'not_captured', queue: false };
  if (!opts.enabled) return { answer: 'null', reason: 'disabled', queue: false };
  return { answer: 'null', reason: 'capturing', queue: true };
}

/** The URL a page is captured from: the site's stored URL (its path prefix kept) followed by the page path. */
export function captureUrl(siteUrl: string, page: string): string {
  const base = new URL(siteUrl);
  const path = page.startsWith('/') ? page : `/${page}`;
  return `${base.origin}${base.pathname.replace(/\/+$/, '')}${path}`;
}

/** The UTC day a capture counts against. */
export function quotaDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}
