import {
  BATCH_MAX_EVENTS,
  BEACON_MAX_BYTES,
  MAX_ATTEMPTS,
  MAX_BACKOFF_MS,
  MAX_QUEUE_EVENTS,
  MAX_RETRY_AFTER_MS,
  SIGNAL_FLUSH_MS,
} from './constants.ts';
import { stamp } from './core.ts';
import { guard } from './guard.ts';
import { uuid } from './ids.ts';
import type { WireBatch, WireContext, WireEvent } from './types.ts';

interface Item {
  /** session id: a batch carries one, so events of a renewed session start a new batch */
  s: string;
  e: WireEvent;
}

interface Batch {
  /** batch_id, kept across retries and the pagehide beacon so ingest dedups a resend */
  id: string;
  s: string;
  events: WireEvent[];
  attempt: number;
}

export interface TransportOptions {
  url: string;
  key: string;
  interval: number;
  context: () => WireContext;
  /** The page's fetch as it was before the SDK patched it, so our own sends never look like page activity. */
  fetch: typeof fetch;
}

/**
 * Retry-After in ms; null when absent or unreadable. Ingest sends delta-seconds; the HTTP-date form
 * is read as absent (plain backoff), which is safe, just not as precise.
 */
export const parseRetryAfter = (h: string | null): number | null => {
  const n = h ? +h : NaN;
  return n >= 0 ? n * 1000 : null;
};

/**
 * Wait before attempt `attempt + 1`: the server's Retry-After when it gave one (plus up to 10% so
 * clients told the same number do not return in lockstep), else 1 s doubling to 30 s, half jittered.
 */
export const retryDelay = (attempt: number, retryAfterMs: number | null, rand = Math.random()): number => {
  if (retryAfterMs !== null) return Math.min(retryAfterMs, MAX_RETRY_AFTER_MS) * (1 + rand / 10);
  const base = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (attempt - 1));
  return base / 2 + (rand * base) / 2;
};

/** 429 and the gateway/unavailable 5xx are transient; network failures (status 0) too. */
const retriable = (status: number): boolean => /^(0|429|50[234])$/.test(status as unknown as string);

export type Transport = ReturnType<typeof createTransport>;

/**
 * Queue → batches → POST {endpoint}/v1/ingest. One batch in flight at a time (it also waits out its
 * retries, which is the backpressure), a bounded queue that drops the oldest, and a beacon at pagehide.
 * A closure rather than a class: its private names then minify, which the 8 KB budget needs.
 */
export const createTransport = (o: TransportOptions) => {
  const queue: Item[] = [];
  const n = { sent: 0, batches: 0, dropped: 0, retries: 0, rejected: 0 };
  let batch: Batch | null = null;
  let reported = 0;
  let wanted = false;
  /** Nothing is sent until the remote config is in (see release): it may rule out the session or some events. */
  let held = true;
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** When the pending timer fires, epoch ms. */
  let due = 0;

  const later = (ms: number): void => {
    clearTimeout(timer);
    due = Date.now() + ms;
    timer = setTimeout(
      guard(() => flush(ms ? true : wanted)),
      ms,
    );
  };
  /**
   * How soon to send what is queued: a friction signal within SIGNAL_FLUSH_MS, so an issue shows in the API
   * seconds after it happened; page views and custom events can wait for the interval and share a batch.
   */
  const soon = (): number =>
    queue.some((i) => i.e.type === 'signal') ? Math.min(o.interval, SIGNAL_FLUSH_MS) : o.interval;

  const take = (): Batch | null => {
    if (!queue.length) return null;
    const s = queue[0].s;
    const events: WireEvent[] = [];
    while (queue.length && events.length < BATCH_MAX_EVENTS && queue[0].s === s) events.push(queue.shift()!.e);
    if (n.dropped > reported) {
      // Reported to the service as a custom event on the current page.
      events.push(stamp({ type: 'custom', name: 'sdk_queue_dropped', value: n.dropped - reported }));
      reported = n.dropped;
    }
    return { id: uuid(), s, events, attempt: 0 };
  };

  const body = (b: Batch, withKey: boolean): string => {
    const out: WireBatch = {
      batch_id: b.id,
      session_id: b.s,
      sent_at: Date.now(),
      context: o.context(),
      events: b.events,
    };
    if (withKey) out.key = o.key;
    return JSON.stringify(out);
  };

  const send = (b: Batch): void => {
    b.attempt++;
    const done = guard((status: number, retryAfter: string | null) => settle(b, status, retryAfter));
    // A fetch that throws at once (a broken polyfill) is a network failure like any other.
    new Promise<Response>((ok) =>
      ok(
        o.fetch(o.url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${o.key}` },
          body: body(b, false),
          credentials: 'omit',
        }),
      ),
    ).then(
      (r) => done(r.status, r.headers.get('Retry-After')),
      () => done(0, null),
    );
  };

  const settle = (b: Batch, status: number, retryAfter: string | null): void => {
    // A beacon at pagehide may have taken this batch over; its late answer changes nothing.
    if (batch !== b) return;
    const count = b.events.length;
    if (status >= 200 && status < 300) {
      n.sent += count;
      n.batches++;
    } else if (!retriable(status)) {
      // 400/401/413: resending the same bytes cannot succeed.
      n.rejected += count;
    } else if (b.attempt < MAX_ATTEMPTS) {
      n.retries++;
      return void setTimeout(
        guard(() => batch === b && send(b)),
        retryDelay(b.attempt, parseRetryAfter(retryAfter)),
      );
    } else n.dropped += count;
    batch = null;
    // A full batch, or a flush() still asked for, goes on the next tick; the rest waits as push() would.
    if (queue.length) later(queue.length >= BATCH_MAX_EVENTS || wanted ? 0 : soon());
    else wanted = false;
  };

  /** Sends the next batch unless one is already out; `all` keeps sending until the queue is empty. */
  const flush = (all: boolean): void => {
    clearTimeout(timer);
    timer = undefined;
    if (all) wanted = true;
    if (batch || held) return;
    batch = take();
    if (batch) send(batch);
    else wanted = false;
  };

  return {
    /** Counters and state for stats(). */
    info: () => ({ queued: queue.length, inflight: !!batch, ...n }),
    flush,
    push(s: string, e: WireEvent): void {
      queue.push({ s, e });
      if (queue.length > MAX_QUEUE_EVENTS) {
        queue.shift();
        n.dropped++;
      }
      const ms = queue.length >= BATCH_MAX_EVENTS ? 0 : soon();
      // An earlier deadline wins: a signal pulls a waiting page view's batch forward, never the reverse.
      if (!timer || Date.now() + ms < due) later(ms);
    },
    /** The remote config is applied (or given up on): send as usual from now on. */
    release(): void {
      held = false;
      if (wanted || !timer) flush(true);
    },
    /**
     * Page is going away: hand everything to sendBeacon (text/plain, so no CORS preflight; key in the
     * body, since beacons cannot set headers). The batch in flight or waiting to retry goes too, with
     * its batch_id, so ingest dedups it if the original also lands.
     */
    beacon(): void {
      clearTimeout(timer);
      timer = undefined;
      const out: Batch[] = batch ? [batch] : [];
      batch = null;
      for (let b = take(); b; b = take()) out.push(b);
      for (const b of out) {
        const text = body(b, true);
        try {
          if (text.length > BEACON_MAX_BYTES || !navigator.sendBeacon(o.url, text)) throw 0;
        } catch {
          // Too big, refused, or sendBeacon missing or broken: a keepalive fetch also outlives the page. A string body
          // goes as text/plain;charset=UTF-8 (Fetch standard), as a beacon does: a simple request, no preflight.
          new Promise((ok) =>
            ok(o.fetch(o.url, { method: 'POST', body: text, keepalive: true, credentials: 'omit' })),
          ).catch(() => undefined);
        }
        n.sent += b.events.length;
      }
    },
  };
};
