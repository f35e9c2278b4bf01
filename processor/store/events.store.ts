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

/**
 * Columns of `events` in insert order. `csv` columns never contain a comma (uuids, ISO timestamps, numbers): they
 * travel as one comma-joined string split by `string_to_array` in SQL, which costs a fraction of node-postgres'
 * per-element array escaping; free text travels as a regular array parameter.
 */
const COLUMNS = [
  ['site_id', 'uuid', 'csv'], ['id', 'uuid', 'csv'], ['ts', 'timestamptz', 'csv'], ['received_at', 'timestamptz', 'csv'],
  ['session_id', 'text', 'array'], ['type', 'text', 'csv'], ['page', 'text', 'array'], ['signal', 'text', 'array'],
  ['name', 'text', 'array'], ['selector', 'text', 'array'], ['label', 'text', 'array'],
  ['x', 'smallint', 'csv'], ['y', 'smallint', 'csv'], ['vx', 'smallint', 'csv'], ['vy', 'smallint', 'csv'], ['px', 'smallint', 'csv'], ['py', 'smallint', 'csv'],
  ['value', 'float8', 'csv'], ['meta', 'jsonb', 'array'], ['device', 'text', 'csv'], ['source', 'text', 'array'],
  ['app_version', 'text', 'array'], ['environment', 'text', 'array'],
] as const;

/** An array parameter for a column: csv columns as one string (empty field = null), the rest as JS arrays. */
function columnParam(values: unknown[], type: string, mode: 'csv' | 'array') {
  return mode === 'csv'
    ? sql`string_to_array(${values.map((v) => (v === null ? '' : String(v))).join(',')}, ',', '')::${sql.raw(type)}[]`
    : sql`${values}::${sql.raw(type)}[]`;
}

/**
 * Stores the events of many batches in one statement (unnest of column arrays: one round trip for
 * thousands of rows) and returns only the rows that were new. `ON CONFLICT DO NOTHING` on (site, id, ts)
 * makes a redelivered batch a no-op, and downstream counters fold only what this returns.
 */
export async function insertEvents(db: Db, batches: readonly EventBatchMessage[]): Promise<StoredEvent[]> {
  const cols: unknown[][] = COLUMNS.map(() => []);
  // What RETURNING identifies, so only (site, id, ts) comes back from the database, not whole rows.
  const byKey = new Map<string, StoredEvent>();
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
      const key = `${b.site_id}|${e.id}|${e.ts}`;
      if (!byKey.has(key)) {
        byKey.set(key, {
          siteId: b.site_id, id: e.id, ts: e.ts, sessionId: b.session_id, type: e.type, page: e.page, signal: e.signal ?? null,
          selector: e.selector ?? null, label: e.label ?? null, value: e.value ?? null, device: b.context.device,
        });
      }
    }
  }
  if (cols[0].length === 0) return [];
  const names = sql.raw(COLUMNS.map(([n]) => n).join(', '));
  const arrays = sql.join(COLUMNS.map(([, type, mode], i) => columnParam(cols[i], type, mode)));
  const { rows } = await sql<{ site_id: string; id: string; ts_ms: number }>`
    insert into events (${names}) select * from unnest(${arrays})
    on conflict do nothing
    returning site_id, id, (extract(epoch from ts) * 1000)::float8 as ts_ms`.execute(db);
  const out: StoredEvent[] = [];
  for (const r of rows) {
    const e = byKey.get(`${r.site_id}|${r.id}|${Math.round(r.ts_ms)}`);
    if (e) out.push(e);
  }
  return out;
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
  const types = [
    ['uuid', 'csv'], ['uuid', 'csv'], ['timestamptz', 'csv'], ['text', 'array'], ['text', 'array'], ['text', 'array'], ['text', 'array'],
    ['text', 'array'], ['smallint', 'csv'], ['smallint', 'csv'], ['smallint', 'csv'], ['smallint', 'csv'], ['smallint', 'csv'],
    ['smallint', 'csv'], ['text', 'csv'],
  ] as const;
  await sql`insert into signals (site_id, event_id, ts, session_id, page, signal_type, selector, label, x, y, vx, vy, px, py, device)
    select * from unnest(${sql.join(types.map(([t, mode], i) => columnParam(cols[i], t, mode)))})
    on conflict do nothing`.execute(db);
}
