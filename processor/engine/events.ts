import type { EventType } from '../../shared/contracts/ingest.ts';
import { SIGNAL_CATALOG } from '../../shared/domain/signal-catalog.ts';

/**
 * The one event shape the engine reads: a stream event flattened with its batch's site and session. Stored
 * `events`/`signals` rows map onto it one to one, which is what lets a from-scratch recomputation over the store
 * be compared with the incremental state.
 */
export interface EngineEvent {
  /** Event uuid from the SDK; unique per site. The store deduplicates on it before the engine sees an event. */
  readonly id: string;
  readonly siteId: string;
  readonly sessionId: string;
  readonly type: EventType;
  /** Event time, epoch ms (client clock, bounded by ingest). */
  readonly ts: number;
  /** Page path. */
  readonly page: string;
  /** Signal type, present on `type: 'signal'` events. */
  readonly signal?: string | undefined;
  /** CSS selector of the element, as the SDK captured it. */
  readonly selector?: string | undefined;
  /** Short accessible name of the element (never an input value). */
  readonly label?: string | undefined;
}

/** A signal event with its type present: the only events clusters and elements read. */
export function isSignalEvent(e: EngineEvent): e is EngineEvent & { readonly signal: string } {
  return e.type === 'signal' && typeof e.signal === 'string' && e.signal.length > 0;
}

const CATALOGUED_TYPES = new Map(SIGNAL_CATALOG.map((d) => [d.type, d.type]));

/**
 * The catalogue's own string for a catalogued signal type (else `type`), for the state to keep. A message's decode
 * gives each message its own copy of every string of 10 characters or more (V8's JSON.parse interns only shorter
 * ones), so state keeping its events' types would hold a copy per cluster and per page-hour: 32-56 bytes each, at a
 * million clusters 30-50 MiB.
 */
export function sharedSignalType(type: string): string {
  return CATALOGUED_TYPES.get(type) ?? type;
}
