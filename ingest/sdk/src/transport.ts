import {
  BATCH_MAX_EVENTS,
  BEACON_MAX_BYTES,
  MAX_ATTEMPTS,
  MAX_BACKOFF_MS,
  MAX_QUEUE_EVENTS,
  MAX_RETRY_AFTER_MS,
} from './constants.ts';
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
  /** Builds the custom event that reports dropped events to the service. */
  dropEvent: (count: number) => WireEvent;
}

/** Retry-After in ms, from delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(h: string | null, t = Date.now()): number | null {
  if (!h) return null;
  const n = Number(h);
  if (h.trim() !== '' && Number.isFinite(n) && n >= 0) return n * 1000;
  const d = Date.parse(h);
  return Number.isNaN(d) ? null : Math.max(0, d - t);
}

/**
 * Wait before attempt `attempt + 1`: the server's Retry-After when it gave one (plus up to 10% so
 * clients told the same number do not return in lockstep), else 1 s doubling to 30 s, half jittered.
 */
export function retryDelay(attempt: number, retryAfterMs: number | null, rand = Math.random()): number {
  if (retryAfterMs !== null) return Math.min(retryAfterMs, MAX_RETRY_AFTER_MS) * (1 + rand / 10);
  const base = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (attempt - 1));
  return base / 2 + (rand * base) / 2;
}

/** 429 and the gateway/unavailable 5xx are transient; network failures (status 0) too. */
const retriable = (status: number): boolean => status === 0 || status === 429 || status === 502 || status === 503 || status === 504;

/**
 * Queue → batches → POST {endpoint}/v1/ingest. One batch in flight at a time (it also waits out its
 * retries, which is the backpressure), a bounded queue that drops the oldest, and a beacon at pagehide.
 */
export class Transport {
  queue: Item[] = [];
  batch: Batch | null = null;
  inflight = false;
  sent = 0;
  batches = 0;
  dropped = 0;
  retries = 0;
  rejected = 0;
  private reported = 0;
  private wanted = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private o: TransportOptions;

  constructor(o: TransportOptions) {
    this.o = o;
  }

  push(s: string, e: WireEvent): void {
    this.queue.push({ s, e });
    if (this.queue.length > MAX_QUEUE_EVENTS) {
      this.queue.shift();
      this.dropped++;
    }
    if (this.queue.length >= BATCH_MAX_EVENTS) this.later(0);
    else if (!this.timer) this.later(this.o.interval);
  }

  private later(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(
      guard(() => this.flush(ms === 0 ? this.wanted : true)),
      ms,
    );
  }

  /** Sends the next batch unless one is already out; `all` keeps sending until the queue is empty. */
  flush(all = true): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (all) this.wanted = true;
    if (this.batch) return;
    const b = this.take();
    if (!b) {
      this.wanted = false;
      return;
    }
    this.batch = b;
    this.send(b);
  }

  private take(): Batch | null {
    if (!this.queue.length) return null;
    const s = this.queue[0].s;
    const events: WireEvent[] = [];
    while (this.queue.length && events.length < BATCH_MAX_EVENTS && this.queue[0].s === s) events.push(this.queue.shift()!.e);
    if (this.dropped > this.reported) {
      events.push(this.o.dropEvent(this.dropped - this.reported));
      this.reported = this.dropped;
    }
    return { id: uuid(), s, events, attempt: 0 };
  }

  private body(b: Batch, withKey: boolean): string {
    const body: WireBatch = { batch_id: b.id, session_id: b.s, sent_at: Date.now(), context: this.o.context(), events: b.events };
    if (withKey) body.key = this.o.key;
    return JSON.stringify(body);
  }

  private send(b: Batch): void {
    b.attempt++;
    this.inflight = true;
    const settle = guard((status: number, retryAfter: string | null) => this.settle(b, status, retryAfter));
    let p: Promise<Response>;
    try {
      p = this.o.fetch(this.o.url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${this.o.key}` },
        body: this.body(b, false),
        credentials: 'omit',
      });
    } catch (err) {
      p = Promise.reject(err);
    }
    p.then(
      (r) => settle(r.status, r.headers.get('Retry-After')),
      () => settle(0, null),
    );
  }

  private settle(b: Batch, status: number, retryAfter: string | null): void {
    // A beacon at pagehide may have taken this batch over; its late answer changes nothing.
    if (this.batch !== b) return;
    this.inflight = false;
    if (status >= 200 && status < 300) {
      this.sent += b.events.length;
      this.batches++;
    } else if (retriable(status) && b.attempt < MAX_ATTEMPTS) {
      this.retries++;
      setTimeout(
        guard(() => this.batch === b && this.send(b)),
        retryDelay(b.attempt, parseRetryAfter(retryAfter)),
      );
      return;
    } else if (retriable(status)) {
      this.dropped += b.events.length;
    } else {
      // 400/401/413: resending the same bytes cannot succeed.
      this.rejected += b.events.length;
    }
    this.batch = null;
    if (this.queue.length >= BATCH_MAX_EVENTS || (this.queue.length && this.wanted)) this.flush(this.wanted);
    else if (this.queue.length) this.later(this.o.interval);
    else this.wanted = false;
  }

  /**
   * Page is going away: hand everything to sendBeacon (text/plain, so no CORS preflight; key in the
   * body, since beacons cannot set headers). The batch in flight or waiting to retry goes too, with
   * its batch_id, so ingest dedups it if the original also lands.
   */
  beacon(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const out: Batch[] = this.batch ? [this.batch] : [];
    this.batch = null;
    this.inflight = false;
    for (let b = this.take(); b; b = this.take()) out.push(b);
    for (const b of out) {
      const body = this.body(b, true);
      let ok = false;
      try {
        ok = body.length <= BEACON_MAX_BYTES && navigator.sendBeacon(this.o.url, body);
      } catch {
        ok = false;
      }
      if (!ok) {
        try {
          // Too big or refused: a keepalive fetch also outlives the page.
          void this.o.fetch(this.o.url, { method: 'POST', body, keepalive: true, credentials: 'omit', headers: { 'Content-Type': 'text/plain' } }).catch(() => undefined);
          ok = true;
        } catch {
          this.dropped += b.events.length;
        }
      }
      if (ok) this.sent += b.events.length;
    }
  }
}
