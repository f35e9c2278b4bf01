import {
  MAX_EVENT_AGE_MS,
  MAX_FUTURE_SKEW_MS,
  type EventBatchMessage,
  type IngestBatch,
  type StreamEvent,
} from '../shared/contracts/ingest.ts';
import type { ErrorDetail } from '../shared/errors.ts';
import { deterministicId } from '../shared/ids.ts';
import { legacyToPermille } from '../shared/contracts/legacy-coordinates.ts';

/**
 * A fragment that names a route of a hash-routed single-page app: `#/payments`, `#!/payments`. Any other
 * fragment (`#section-2`, `#top`, `#`) is an anchor inside the page. The route's own query (`#/search?q=…`)
 * is dropped like the URL's, and so is a trailing slash; an empty route (`#/`, `#!/`) is the app's root,
 * which is the page itself.
 */
function hashRoute(fragment: string): string {
  const m = /^#(!?)\/([^?]*)/.exec(fragment);
  if (!m) return '';
  const route = m[2].replace(/\/+$/, '');
  return route ? `#${m[1]}/${route}` : '';
}

/**
 * Page identity is the path: query strings and anchors vary per visit (tracking ids, steps, headings) and would
 * split one page's friction across thousands of keys. Full URLs are reduced to their path. A hash route is
 * part of the page (`/kb/#/payments` is stored as `/kb#/payments`): without it every view of a hash-routed
 * app would collapse into one page.
 */
export function normalizePage(page: string): string {
  let p = page.trim();
  if (/^https?:\/\//i.test(p)) {
    try {
      const u = new URL(p);
      p = u.pathname + u.hash;
    } catch {
      /* keep as sent */
    }
  }
  const hash = p.indexOf('#');
  const route = hash >= 0 ? hashRoute(p.slice(hash)) : '';
  p = p.replace(/[?#].*$/, '');
  if (!p.startsWith('/')) p = `/${p}`;
  p = p.length > 1 ? p.replace(/\/+$/, '') || '/' : p;
  return p + route;
}

/** Clock corrections are whole minutes: below half a minute the difference is network latency, not a wrong clock. */
export const SKEW_STEP_MS = 60_000;

/**
 * Corrects the batch's event times by the device's clock error, measured as `receivedAt - sent_at` (both stamp the
 * same moment, the send, by two clocks) and rounded to whole minutes, so latency never moves an event and every
 * retry of a batch gets the same correction (its events keep their stored identity `(site, id, ts)`). Returns
 * the correction applied in ms (0 for a device whose clock is within half a minute of ours).
 */
export function correctClockSkew(batch: IngestBatch, receivedAt: number): number {
  const correction = Math.round((receivedAt - batch.sent_at) / SKEW_STEP_MS) * SKEW_STEP_MS;
  if (correction === 0) return 0;
  for (const e of batch.events) e.ts += correction;
  return correction;
}

/** Event timestamps outside [now - 30 d, now + 1 h] (after the clock correction) are refused, naming each event. */
export function checkTimestamps(batch: IngestBatch, now: number): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  batch.events.forEach((e, i) => {
    if (e.ts > now + MAX_FUTURE_SKEW_MS)
      out.push({ path: `events[${i}].ts`, message: 'is more than 1 hour in the future' });
    else if (e.ts < now - MAX_EVENT_AGE_MS) out.push({ path: `events[${i}].ts`, message: 'is more than 30 days old' });
  });
  return out;
}

/**
 * The stream message for an accepted batch. Events repeated inside the batch are dropped (counted as
 * duplicates). The batch id is the client's, or derived from the site and event ids, so a client that
 * retries the same batch gets the same Nats-Msg-Id and the stream drops the copy.
 */
export function toBatchMessage(
  batch: IngestBatch,
  key: { orgId: string; siteId: string },
  receivedAt: number,
): { message: EventBatchMessage; inBatchDuplicates: number } {
  const seen = new Set<string>();
  const events: StreamEvent[] = [];
  // A batch's events nearly always share a page or two: normalize each distinct value once. The parsed batch is
  // this request's own copy, so its events are reused rather than copied.
  const pages = new Map<string, string>();
  for (const e of batch.events) {
    if (seen.has(e.id)) continue;
    seen.add(e.id);
    let page = pages.get(e.page);
    if (page === undefined) pages.set(e.page, (page = normalizePage(e.page)));
    e.page = page;
    legacyToPermille(e, batch.context.viewport);
    events.push(e);
  }
  const batchId = batch.batch_id ?? deterministicId(key.siteId, ...events.map((e) => e.id));
  return {
    message: {
      v: 1,
      batch_id: `${key.siteId}:${batchId}`,
      org_id: key.orgId,
      site_id: key.siteId,
      received_at: receivedAt,
      session_id: batch.session_id,
      context: batch.context,
      events,
    },
    inBatchDuplicates: batch.events.length - events.length,
  };
}
