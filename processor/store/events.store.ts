import { sql } from 'kysely';
import type { EventBatchMessage, StreamEvent } from '../../shared/contracts/ingest.ts';
import { CopyRows, type BulkTransaction } from '../../shared/db/bulk.ts';
import { csvArray } from '../../shared/db/csv-array.ts';
import { countHeatmapSignals } from '../../shared/db/page-heatmap-hours.ts';
import { appendJourneySteps } from '../../shared/db/journey-steps.ts';
import type { EngineEvent } from '../engine/events.ts';
import { environmentOf } from '../../shared/domain/deploy-verification.ts';

/** An event this transaction stored for the first time (redeliveries never come back as new): what the engine reads, plus what sessions count. */
export interface StoredEvent extends EngineEvent {
  readonly value: number | undefined;
  readonly device: string;
  /** The batch's `context.environment` (absent means production). */
  readonly environment: string | undefined;
}

/** One event of the fetched batches, with the batch it came in. */
interface Row {
  batch: EventBatchMessage;
  event: StreamEvent;
  tsIso: string;
  receivedIso: string;
}

type Mode = 'csv' | 'array';
type Column = readonly [name: string, type: string, mode: Mode, value: (r: Row) => string | number | null];

/** The element and position columns `events` and `signals` share, in their insert order. */
const ELEMENT_COLUMNS: readonly Column[] = [
  ['selector', 'text', 'array', (r) => r.event.selector ?? null],
  ['label', 'text', 'array', (r) => r.event.label ?? null],
  ['x', 'smallint', 'csv', (r) => r.event.x ?? null],
  ['y', 'smallint', 'csv', (r) => r.event.y ?? null],
  ['vx', 'smallint', 'csv', (r) => r.event.vx ?? null],
  ['vy', 'smallint', 'csv', (r) => r.event.vy ?? null],
  ['px', 'smallint', 'csv', (r) => r.event.px ?? null],
  ['py', 'smallint', 'csv', (r) => r.event.py ?? null],
];

/**
 * Columns of `events` in insert order, with how each travels in the multi-row fallback: `csv` columns never contain
 * a comma (uuids, ISO timestamps, numbers) and go as one comma-joined string split by `string_to_array`, which
 * costs a fraction of node-postgres' per-element array escaping; free text goes as a regular array parameter.
 */
const EVENT_COLUMNS: readonly Column[] = [
  ['site_id', 'uuid', 'csv', (r) => r.batch.site_id],
  ['id', 'uuid', 'csv', (r) => r.event.id],
  ['ts', 'timestamptz', 'csv', (r) => r.tsIso],
  ['received_at', 'timestamptz', 'csv', (r) => r.receivedIso],
  ['session_id', 'text', 'array', (r) => r.batch.session_id],
  ['type', 'text', 'csv', (r) => r.event.type],
  ['page', 'text', 'array', (r) => r.event.page],
  ['signal', 'text', 'array', (r) => r.event.signal ?? null],
  ['name', 'text', 'array', (r) => r.event.name ?? null],
  ...ELEMENT_COLUMNS,
  ['value', 'float8', 'csv', (r) => r.event.value ?? null],
  ['meta', 'jsonb', 'array', (r) => (r.event.meta ? JSON.stringify(r.event.meta) : null)],
  ['device', 'text', 'csv', (r) => r.batch.context.device],
  ['source', 'text', 'array', (r) => r.batch.context.source ?? null],
  ['app_version', 'text', 'array', (r) => r.batch.context.app_version ?? null],
  ['environment', 'text', 'array', (r) => r.batch.context.environment ?? null],
];

/** Columns of `signals`: the narrow projection of signal events that heatmaps and clusters read. */
const SIGNAL_COLUMNS: readonly Column[] = [
  ['site_id', 'uuid', 'csv', (r) => r.batch.site_id],
  ['event_id', 'uuid', 'csv', (r) => r.event.id],
  ['ts', 'timestamptz', 'csv', (r) => r.tsIso],
  ['session_id', 'text', 'array', (r) => r.batch.session_id],
  ['page', 'text', 'array', (r) => r.event.page],
  ['signal_type', 'text', 'array', (r) => r.event.signal ?? 'unknown'],
  ...ELEMENT_COLUMNS,
  ['device', 'text', 'csv', (r) => r.batch.context.device],
  ['environment', 'text', 'csv', (r) => environmentOf(r.batch.context.environment)],
];

const names = (columns: readonly Column[]) => columns.map(([n]) => n);

/** One unnest array parameter per column: csv columns as one string (empty field = null), the rest as JS arrays. */
function unnestArrays(columns: readonly Column[], rows: readonly Row[]) {
  return sql.join(
    columns.map(([, type, mode, value]) => {
      const values = rows.map(value);
      return mode === 'csv'
        ? csvArray(values, type as Parameters<typeof csvArray>[1])
        : sql`${values}::${sql.raw(type)}[]`;
    }),
  );
}

/**
 * Writes rows with COPY when the transaction offers it; `false` means the caller must take the `ON CONFLICT DO
 * NOTHING` path (the embedded database, or the run again of a transaction whose COPY met stored rows).
 */
async function copyAll(
  tx: BulkTransaction,
  table: string,
  columns: readonly Column[],
  rows: readonly Row[],
): Promise<boolean> {
  if (!tx.copy) return false;
  const text = new CopyRows();
  const fields: (string | number | null)[] = new Array(columns.length);
  for (const r of rows) {
    for (let i = 0; i < columns.length; i++) fields[i] = columns[i][3](r);
    text.add(fields);
  }
  await tx.copy.copyRows(table, names(columns), text);
  return true;
}

const toStored = (r: Row): StoredEvent => ({
  siteId: r.batch.site_id,
  id: r.event.id,
  ts: r.event.ts,
  sessionId: r.batch.session_id,
  type: r.event.type,
  page: r.event.page,
  signal: r.event.signal,
  selector: r.event.selector,
  label: r.event.label,
  value: r.event.value,
  device: r.batch.context.device,
  environment: r.batch.context.environment,
});

/**
 * Stores the events of many batches, and the signal ones again in `signals`, in the caller's transaction; returns
 * only the events that were new, so downstream counters fold each event once. Unique (site, id, ts) makes a
 * redelivered batch a no-op: the fast path COPYs everything, and a conflict runs the transaction again through
 * `INSERT ... ON CONFLICT DO NOTHING RETURNING`, which tells which rows were already there.
 */
export async function storeEvents(tx: BulkTransaction, batches: readonly EventBatchMessage[]): Promise<StoredEvent[]> {
  const rows: Row[] = [];
  for (const batch of batches) {
    const receivedIso = new Date(batch.received_at).toISOString();
    for (const event of batch.events) rows.push({ batch, event, tsIso: new Date(event.ts).toISOString(), receivedIso });
  }
  if (rows.length === 0) return [];

  // An event twice in one fetch (or already stored) makes the COPY fail on the unique index; the transaction's
  // run again takes the insert below, which stores each once and tells which were new.
  const fresh = (await copyAll(tx, 'events', EVENT_COLUMNS, rows)) ? rows : await insertNew(tx, rows);

  // `signals` feeds each environment's clusters, elements and heatmaps (its `environment` column keeps them apart).
  const signals = fresh.filter((r) => r.event.type === 'signal');
  if (signals.length > 0 && !(await copyAll(tx, 'signals', SIGNAL_COLUMNS, signals))) {
    await sql`insert into signals (${sql.raw(names(SIGNAL_COLUMNS).join(', '))}) select * from unnest(${unnestArrays(SIGNAL_COLUMNS, signals)})
      on conflict do nothing`.execute(tx.trx);
  }
  // The page heatmap's hourly counts (migration 0380), with the signals they count.
  await countHeatmapSignals(
    tx.trx,
    signals
      .filter((r) => r.event.vx != null && r.event.vy != null)
      .map((r) => ({
        siteId: r.batch.site_id,
        environment: environmentOf(r.batch.context.environment),
        page: r.event.page,
        ts: r.event.ts,
        device: r.batch.context.device,
      })),
  );
  // The journeys route's steps (migration 0410): the fresh page views and edge-decorator signals, appended.
  await appendJourneySteps(
    tx.trx,
    fresh.map((r) => ({
      siteId: r.batch.site_id,
      sessionId: r.batch.session_id,
      environment: r.batch.context.environment,
      type: r.event.type,
      page: r.event.page,
      ts: r.event.ts,
      signal: r.event.signal,
      selector: r.event.selector,
      meta: r.event.meta,
    })),
  );
  return fresh.map(toStored);
}

/** `INSERT ... ON CONFLICT DO NOTHING RETURNING`: the rows that were not stored yet, each once. */
async function insertNew(tx: BulkTransaction, rows: readonly Row[]): Promise<Row[]> {
  const byKey = new Map<string, Row>();
  for (const r of rows) {
    const key = `${r.batch.site_id}|${r.event.id}|${r.event.ts}`;
    if (!byKey.has(key)) byKey.set(key, r);
  }
  const unique = [...byKey.values()];
  // Raw: insert from unnest(column arrays) of the hot path (csv columns split by string_to_array), which kysely cannot type.
  const { rows: inserted } = await sql<{ site_id: string; id: string; ts_ms: number }>`
    insert into events (${sql.raw(names(EVENT_COLUMNS).join(', '))}) select * from unnest(${unnestArrays(EVENT_COLUMNS, unique)})
    on conflict do nothing
    returning site_id, id, (extract(epoch from ts) * 1000)::float8 as ts_ms`.execute(tx.trx);
  const fresh: Row[] = [];
  for (const r of inserted) {
    const row = byKey.get(`${r.site_id}|${r.id}|${Math.round(r.ts_ms)}`);
    if (row) fresh.push(row);
  }
  return fresh;
}
