/** Test-only: Explore datasets (events, and the session rows the processor derives from them) and their insertion. */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { rebuildPageBuckets, rebuildSessionKeys, rebuildSessionRollups } from '../../../shared/db/session-rollups.ts';
import type { RefEvent, RefSession } from './explore.reference.ts';

export interface TestEvent extends RefEvent {
  value: number | null;
}

export interface TestSessionContext {
  site_id: string;
  id: string;
  device: string;
  source: string | null;
  app_version: string | null;
  environment: string | null;
}

/** The session row the processor would store for these events (processor/store/sessions.store.ts, sessionDeltas). */
export function deriveSession(ctx: TestSessionContext, events: readonly TestEvent[]): RefSession {
  const ts = events.map((e) => e.ts);
  return {
    ...ctx,
    started_at: Math.min(...ts),
    last_seen_at: Math.max(...ts),
    page_views: events.filter((e) => e.type === 'page_view').length,
    conversions: events.filter((e) => e.type === 'conversion').length,
    revenue: events.filter((e) => e.type === 'conversion').reduce((a, e) => a + (e.value ?? 0), 0),
  };
}

export interface Dataset {
  sessions: RefSession[];
  events: TestEvent[];
}

/** The element and coordinates of an event: none in these datasets. */
const NO_TARGET = { selector: null, label: null, x: null, y: null, vx: null, vy: null, px: null, py: null };

/** Writes the rows as the processor stores them (events with their batch context, one session row each). */
export async function insertDataset(db: Kysely<Database>, data: Dataset): Promise<void> {
  const ctx = new Map(data.sessions.map((s) => [`${s.site_id}:${s.id}`, s]));
  for (let i = 0; i < data.sessions.length; i += 500) {
    const chunk = data.sessions.slice(i, i + 500);
    if (chunk.length === 0) break;
    await db
      .insertInto('sessions')
      .values(
        // The reference session's fields are sessions columns; what it does not model gets plain values.
        chunk.map((s) => ({
          ...s,
          started_at: new Date(s.started_at),
          last_seen_at: new Date(s.last_seen_at),
          first_page: '/',
          last_page: '/',
          event_count: 0,
          signal_count: 0,
        })),
      )
      .execute();
  }
  // Each event with a fresh id and its session's context (device, source, app version, environment).
  const rows = data.events.map((e) => ({
    e: { ...e, event_id: randomUUID() },
    s: ctx.get(`${e.site_id}:${e.session_id}`)!,
  }));
  for (let i = 0; i < rows.length; i += 500) {
    const chunk = rows.slice(i, i + 500);
    await db
      .insertInto('events')
      .values(
        chunk.map(({ e, s }) => ({
          id: e.event_id,
          site_id: e.site_id,
          ts: new Date(e.ts),
          received_at: new Date(e.ts),
          session_id: e.session_id,
          type: e.type,
          page: e.page,
          signal: e.signal,
          name: null,
          ...NO_TARGET,
          value: e.value,
          meta: null,
          device: s.device,
          source: s.source,
          app_version: s.app_version,
          environment: s.environment,
        })),
      )
      .execute();
    // The signal events again in `signals`, as the processor stores them (events.store.ts).
    const signals = chunk.filter(({ e }) => e.type === 'signal');
    if (signals.length > 0) {
      await db
        .insertInto('signals')
        .values(
          signals.map(({ e, s }) => ({
            site_id: e.site_id,
            environment: s.environment === 'staging' ? ('staging' as const) : ('production' as const),
            event_id: e.event_id,
            ts: new Date(e.ts),
            session_id: e.session_id,
            page: e.page,
            signal_type: e.signal ?? 'unknown',
            ...NO_TARGET,
            device: s.device,
          })),
        )
        .execute();
    }
  }
  // The Explorer's session rollup and session keys, as the processor keeps them (rebuilt from the rows just written).
  for (const siteId of new Set(data.sessions.map((s) => s.site_id))) {
    await rebuildSessionRollups(db, siteId);
    await rebuildSessionKeys(db, siteId);
    await rebuildPageBuckets(db, siteId);
  }
}

/** Numbers compared to 9 significant digits: SQL and JS average floats in different orders. */
export function roundFloats<T>(v: T): T {
  return JSON.parse(JSON.stringify(v), (_k, x) =>
    typeof x === 'number' && !Number.isInteger(x) ? Number(x.toPrecision(9)) : x,
  ) as T;
}
