import { sql, type Kysely, type Transaction } from 'kysely';
import type { EventBatchMessage } from '../../shared/contracts/ingest.ts';
import type { Database } from '../../shared/db/database.ts';
import type { StoredEvent } from './events.store.ts';
import { csvArray } from '../../shared/db/csv-array.ts';

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
  for (const e of fresh) {
    const k = `${e.siteId}:${e.sessionId}`;
    let d = out.get(k);
    if (!d) {
      const b = ctx.get(k);
      d = {
        siteId: e.siteId, id: e.sessionId, startedAt: e.ts, lastSeenAt: e.ts, firstPage: e.page, lastPage: e.page,
        events: 0, pageViews: 0, signals: 0, conversions: 0, revenue: 0, device: e.device,
        source: b?.context.source ?? null, referrer: b?.context.referrer ?? null, appVersion: b?.context.app_version ?? null,
        environment: b?.context.environment ?? null, anonymousId: b?.context.anonymous_id ?? null,
      };
      out.set(k, d);
    }
    d.events++;
    if (e.type === 'page_view') d.pageViews++;
    if (e.type === 'signal') d.signals++;
    if (e.type === 'conversion') {
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
  const col = <K extends keyof SessionDelta>(k: K) => deltas.map((d) => d[k]);
  const iso = (k: 'startedAt' | 'lastSeenAt') => deltas.map((d) => new Date(d[k]).toISOString());
  // Free text (session id, pages, source, referrer, versions, ids) as arrays; the rest as one comma-joined string each.
  await sql`
    insert into sessions (site_id, id, started_at, last_seen_at, first_page, last_page, event_count, page_views, signal_count,
                          conversions, revenue, device, source, referrer, app_version, environment, anonymous_id)
    select * from unnest(${csvArray(col('siteId'), 'uuid')}, ${col('id')}::text[], ${csvArray(iso('startedAt'), 'timestamptz')},
      ${csvArray(iso('lastSeenAt'), 'timestamptz')}, ${col('firstPage')}::text[], ${col('lastPage')}::text[], ${csvArray(col('events'), 'int')},
      ${csvArray(col('pageViews'), 'int')}, ${csvArray(col('signals'), 'int')}, ${csvArray(col('conversions'), 'int')}, ${csvArray(col('revenue'), 'float8')},
      ${csvArray(col('device'), 'text')}, ${col('source')}::text[], ${col('referrer')}::text[], ${col('appVersion')}::text[],
      ${col('environment')}::text[], ${col('anonymousId')}::text[])
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
