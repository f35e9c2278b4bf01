/** Test-only: SDK-shaped batches. */
import { randomUUID } from 'node:crypto';

export interface BatchOptions {
  sessionId?: string;
  page?: string;
  events?: number;
  signal?: string;
  selector?: string;
  /** The events' time on the device's clock. */
  ts?: number;
  /** The device's clock when it sends (`sent_at`); default `ts`, a device sending at once. Ingest corrects event
   *  times by `received_at - sent_at`, so events from the past sent now need `sentAt: Date.now()`. */
  sentAt?: number;
  device?: 'desktop' | 'mobile' | 'tablet';
}

/** A signal on a button labelled "Pay now", with the pointer and viewport coordinates an SDK sends. */
export function signalEvent(
  ts: number,
  page: string,
  signal = 'rage_click',
  selector = '#pay',
): Record<string, unknown> {
  return {
    id: randomUUID(),
    type: 'signal',
    ts: new Date(ts).toISOString(),
    page,
    signal,
    selector,
    label: 'Pay now',
    x: 500,
    y: 250,
    vx: 400,
    vy: 300,
    px: 400,
    py: 120,
  };
}

/** A page view followed by `events - 1` signals on one element, like an SDK flush after a struggle. */
export function sdkBatch(o: BatchOptions = {}): {
  session_id: string;
  sent_at: string;
  context: object;
  events: Record<string, unknown>[];
} {
  const ts = o.ts ?? Date.now();
  const page = o.page ?? '/checkout';
  const n = o.events ?? 2;
  const events: Record<string, unknown>[] = [
    { id: randomUUID(), type: 'page_view', ts: new Date(ts).toISOString(), page },
  ];
  for (let i = 1; i < n; i++) events.push(signalEvent(ts + i, page, o.signal ?? 'rage_click', o.selector ?? '#pay'));
  return {
    session_id: o.sessionId ?? `ses-${randomUUID()}`,
    sent_at: new Date(o.sentAt ?? ts).toISOString(),
    context: { device: o.device ?? 'desktop', viewport: { w: 1280, h: 800 } },
    events,
  };
}
