import { sql, type Kysely, type Transaction } from 'kysely';
import type { EventBatchMessage } from '../../shared/contracts/ingest.ts';
import type { Database } from '../../shared/db/database.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** An event this transaction stored for the first time (redeliveries never come back as new). */
export interface StoredEvent {
  siteId: string;
  id: string;
  ts: number;
  sessionId: string;
  type: string;
  page: string;
  signal: string | null;
  selector: string | null;
  label: string | null;
  value: number | null;
  device: string;
}

const COLUMNS = [
  ['site_id', 'uuid'], ['id', 'uuid'], ['ts', 'timestamptz'], ['received_at', 'timestamptz'], ['session_id', 'text'],
  ['type', 'text'], ['page', 'text'], ['signal', 'text'], ['name', 'text'], ['selector', 'text'], ['label', 'text'],
  ['x', 'smallint'], ['y', 'smallint'], ['vx', 'smallint'], ['vy', 'smallint'], ['px', 'smallint'], ['py', 'smallint'],
  ['value', 'float8'], ['meta', 'jsonb'], ['device', 'text'], ['source', 'text'], ['app_version', 'text'], ['environment', 'text'],
] as const;

/**
 * Stores the events of many batches in one statement (unnest of column arrays: one round trip for
 * thousands of rows) and returns only the rows that were new. `ON CONFLICT DO NOTHING` on (site, id, ts)
 * makes a redelivered batch a no-op, and downstream counters fold only what this returns.
 */
export async function insertEvents(db: Db, batches: readonly EventBatchMessage[]): Promise<StoredEvent[]> {
  const cols: unknown[][] = COLUMNS.map(() => []);
  for (const b of batches) {
    const receivedAt = new Date(b.received_at).toISOString();
    for (const e of b.events) {
      const row = [
        b.site_id, e.id, new Date(e.ts).toISOString(), receivedAt, b.session_id, e.type, e.page, e.signal ?? null, e.name ?? null,
        e.selector ?? null, e.label ?? null, e.x ?? null, e.y ?? null, e.vx ?? null, e.vy ?? null, e.px ?? null, e.py ?? null,
        e.value ?? null, e.meta ? JSON.stringify(e.meta) : null, b.context.device, b.context.source ?? null,
        b.context.app_version ?? null, b.context.environment ?? null,
      ];
      for (let i = 0; i < row.length; i++) cols[i].push(row[i]);
    }
  }
  if (cols[0].length === 0) return [];
  const names = sql.raw(COLUMNS.map(([n]) => n).join(', '));
  const arrays = sql.join(COLUMNS.map(([, type], i) => sql`${cols[i]}::${sql.raw(type)}[]`));
  const { rows } = await sql<{
    site_id: string; id: string; ts: Date; session_id: string; type: string; page: string; signal: string | null;
    selector: string | null; label: string | null; value: number | null; device: string;
  }>`insert into events (${names}) select * from unnest(${arrays})
     on conflict do nothing
     returning site_id, id, ts, session_id, type, page, signal, selector, label, value, device`.execute(db);
  return rows.map((r) => ({
    siteId: r.site_id, id: r.id, ts: new Date(r.ts).getTime(), sessionId: r.session_id, type: r.type, page: r.page,
    signal: r.signal, selector: r.selector, label: r.label, value: r.value, device: r.device,
  }));
}

/** Copies the new signal events into `signals` (the narrow table heatmaps and clusters read). */
export async function insertSignals(db: Db, batches: readonly EventBatchMessage[], fresh: ReadonlySet<string>): Promise<void> {
  const cols: unknown[][] = Array.from({ length: 15 }, () => []);
  for (const b of batches) {
    for (const e of b.events) {
      if (e.type !== 'signal' || !fresh.has(`${b.site_id}:${e.id}`)) continue;
      const row = [b.site_id, e.id, new Date(e.ts).toISOString(), b.session_id, e.page, e.signal ?? 'unknown', e.selector ?? null,
        e.label ?? null, e.x ?? null, e.y ?? null, e.vx ?? null, e.vy ?? null, e.px ?? null, e.py ?? null, b.context.device];
      for (let i = 0; i < row.length; i++) cols[i].push(row[i]);
    }
  }
  if (cols[0].length === 0) return;
  const types = ['uuid', 'uuid', 'timestamptz', 'text', 'text', 'text', 'text', 'text', 'smallint', 'smallint', 'smallint', 'smallint', 'smallint', 'smallint', 'text'];
  await sql`insert into signals (site_id, event_id, ts, session_id, page, signal_type, selector, label, x, y, vx, vy, px, py, device)
    select * from unnest(${sql.join(types.map((t, i) => sql`${cols[i]}::${sql.raw(t)}[]`))})
    on conflict do nothing`.execute(db);
}
