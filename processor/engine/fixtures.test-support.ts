import type { EngineEvent } from './events.ts';
import { HOUR_MS } from './time.ts';

/** Test-only helpers (imported by *.test.ts files only). */

/** A fixed "now": 2025-06-15 12:30 UTC, mid-hour and mid-day so both window edges are visible. */
export const T0 = Date.UTC(2025, 5, 15, 12, 30);

let seq = 0;

/** An engine event with sensible defaults; ids are unique per process unless given. */
export function ev(partial: Partial<EngineEvent> & Pick<EngineEvent, 'type'>): EngineEvent {
  seq += 1;
  return {
    id: partial.id ?? `evt-${seq.toString().padStart(6, '0')}`,
    siteId: partial.siteId ?? 'site-1',
    sessionId: partial.sessionId ?? 'ses_1',
    ts: partial.ts ?? T0 - HOUR_MS,
    page: partial.page ?? '/',
    ...partial,
  };
}

/** A page view. */
export function view(sessionId: string, page: string, ts: number, extra: Partial<EngineEvent> = {}): EngineEvent {
  return ev({ type: 'page_view', sessionId, page, ts, ...extra });
}

/** A signal. */
export function sig(
  sessionId: string,
  page: string,
  signal: string,
  ts: number,
  extra: Partial<EngineEvent> = {},
): EngineEvent {
  return ev({ type: 'signal', sessionId, page, signal, ts, ...extra });
}
