import { sql, type Kysely, type Transaction } from 'kysely';
import type { EventBatchMessage } from '../../shared/contracts/ingest.ts';
import type { Database } from '../../shared/db/database.ts';
import { jsonbRows } from '../../shared/db/sql.ts';
import type { StoredEvent } from './events.store.ts';

type Db = Kysely<Database> | Transaction<Database>;

interface SessionDelta {
  siteId: string;
  id: string;
  startedAt: number;
  lastSeenAt: number;
  firstPage: string;
  lastPage: string;
  events: number;
  pageViews: number;
  signals: number;
  conversions: number;
  revenue: number;
  device: string;
  source: string | null;
  referrer: string | null;
  appVersion: string | null;
  environment: string | null;
  anonymousId: string | null;
}

/** Folds the new events into one delta per session (pure). Only new events count, so redeliveries add nothing. */
export function sessionDeltas(fresh: readonly StoredEvent[], batches: readonly EventBatchMessage[]): SessionDelta[] {
  const ctx = new Map<string, EventBatchMessage>();
  for (const b of batches) ctx.set(`${b.site_id}:${b.session_id}`, b);
  const out = new Map<string, SessionDelta>();
  // Fresh events come batch by batch, and a batch is one session: the delta of the previous event is nearly always
  // this one's, found without building its key.
  let d: SessionDelta | undefined;
  for (const e of fresh) {
    if (d === undefined || d.id !== e.sessionId || d.siteId !== e.siteId) {
      const k = `${e.siteId}:${e.sessionId}`;
      d = out.get(k);
      if (!d) {
        const b = ctx.get(k);
        d = {
          siteId: e.siteId,
          id: e.sessionId,
          startedAt: e.ts,
          lastSeenAt: e.ts,
          firstPage: e.page,
          lastPage: e.page,
          events: 0,
          pageViews: 0,
          signals: 0,
          conversions: 0,
          revenue: 0,
          device: e.device,
          source: b?.context.source ?? null,
          referrer: b?.context.referrer ?? null,
          appVersion: b?.context.app_version ?? null,
          environment: b?.context.environment ?? null,
          anonymousId: b?.context.anonymous_id ?? null,
        };
        out.set(k, d);
      }
    }
    d.events++;
    if (e.type === 'page_view') d.pageViews++;
    else if (e.type === 'signal') d.signals++;
    else if (e.type === 'conversion') {
      d.conversions++;
      d.revenue += e.value ?? 0;
    }
    if (e.ts < d.startedAt) [d.startedAt, d.firstPage] = [e.ts, e.page];
    if (e.ts >= d.lastSeenAt) [d.lastSeenAt, d.lastPage] = [e.ts, e.page];
  }
  return [...out.values()];
}

/** Upserts session rows, adding the deltas' counts and widening the time span. */
export async function upsertSessions(db: Db, deltas: readonly SessionDelta[]): Promise<void> {
  if (deltas.length === 0) return;
  const rows = deltas.map((d) => [
    d.siteId,
    d.id,
    d.startedAt,
    d.lastSeenAt,
    d.firstPage,
    d.lastPage,
    d.events,
    d.pageViews,
    d.signals,
    d.conversions,
    d.revenue,
    d.device,
    d.source,
    d.referrer,
    d.appVersion,
    d.environment,
    d.anonymousId,
  ]);
  await sql`
    insert into sessions (site_id, id, started_at, last_seen_at, first_page, last_page, event_count, page_views, signal_count,
                          conversions, revenue, device, source, referrer, app_version, environment, anonymous_id)
    select (r->>0)::uuid, r->>1, to_timestamp((r->>2)::float8 / 1000), to_timestamp((r->>3)::float8 / 1000), r->>4, r->>5,
      (r->>6)::int, (r->>7)::int, (r->>8)::int, (r->>9)::int, (r->>10)::float8, r->>11, r->>12, r->>13, r->>14, r->>15, r->>16
    from ${jsonbRows(rows)}
    on conflict (site_id, id) do update set
      first_page = case when excluded.started_at < sessions.started_at then excluded.first_page else sessions.first_page end,
      last_page = case when excluded.last_seen_at >= sessions.last_seen_at then excluded.last_page else sessions.last_page end,
      started_at = least(sessions.started_at, excluded.started_at),
      last_seen_at = greatest(sessions.last_seen_at, excluded.last_seen_at),
      event_count = sessions.event_count + excluded.event_count,
      page_views = sessions.page_views + excluded.page_views,
      signal_count = sessions.signal_count + excluded.signal_count,
      conversions = sessions.conversions + excluded.conversions,
      revenue = sessions.revenue + excluded.revenue,
      source = coalesce(sessions.source, excluded.source),
      referrer = coalesce(sessions.referrer, excluded.referrer),
      app_version = coalesce(excluded.app_version, sessions.app_version),
      environment = coalesce(sessions.environment, excluded.environment),
      anonymous_id = coalesce(excluded.anonymous_id, sessions.anonymous_id)`.execute(db);
}
