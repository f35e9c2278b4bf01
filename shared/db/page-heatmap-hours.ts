import { sql, type Kysely } from 'kysely';
import { jsonbRows } from './sql.ts';

/** An hour in milliseconds: `page_heatmap_hours.hour` is the UTC hour a signal's time falls in. */
export const HOUR_MS = 3_600_000;

/** The hour of a stored time, as the rebuild and the processor both compute it (date_bin on UTC hours). */
const hourOf = (ts: ReturnType<typeof sql.ref>) => sql`date_bin('1 hour', ${ts}, timestamptz '2000-01-01 00:00:00+00')`;

/** A signal as the page heatmap counts it: only those with viewport coordinates (vx and vy) count. */
export interface HeatmapSignal {
  siteId: string;
  /** As stored in `signals.environment` ('production' or 'staging'). */
  environment: string;
  page: string;
  /** Epoch milliseconds. */
  ts: number;
  device: string;
}

/**
 * Rebuilds `page_heatmap_hours` (migration 0380) from `signals`: of one site, or of every site. The backfill of
 * signals stored before the table existed (the migration) or around the processor (`friction demo`).
 */
export async function rebuildPageHeatmapHours(db: Kysely<any>, siteId?: string): Promise<void> {
  const site = siteId === undefined ? sql`true` : sql`g.site_id = ${siteId}`;
  await sql`delete from page_heatmap_hours g where ${site}`.execute(db);
  await sql`
    insert into page_heatmap_hours (site_id, environment, page, hour, device, signals)
    select g.site_id, g.environment, g.page, ${hourOf(sql.ref('g.ts'))}, g.device, count(*)
    from signals g
    where ${site} and g.vx is not null and g.vy is not null
    group by 1, 2, 3, 4, 5`.execute(db);
}

/**
 * Counts signals the caller's transaction has just stored for the first time (the processor's batch, with the
 * signals): a redelivered signal is not fresh, so nothing moves twice. Rows in key order, so two batches of one page
 * queue on its hour's row instead of deadlocking.
 */
export async function countHeatmapSignals(trx: Kysely<any>, fresh: readonly HeatmapSignal[]): Promise<void> {
  const counts = new Map<
    string,
    [siteId: string, environment: string, page: string, hour: number, device: string, n: number]
  >();
  for (const s of fresh) {
    const hour = Math.floor(s.ts / HOUR_MS) * HOUR_MS;
    const k = `${s.siteId}\u0000${s.environment}\u0000${s.page}\u0000${hour}\u0000${s.device}`;
    const seen = counts.get(k);
    if (seen) seen[5]++;
    else counts.set(k, [s.siteId, s.environment, s.page, hour, s.device, 1]);
  }
  if (counts.size === 0) return;
  // NOTE: raw SQL: an upsert of positional rows (one jsonb document), in key order (the order the locks are taken).
  await sql`
    insert into page_heatmap_hours as h (site_id, environment, page, hour, device, signals)
    select (r->>0)::uuid, r->>1, r->>2, to_timestamp((r->>3)::float8 / 1000), r->>4, (r->>5)::int
    from ${jsonbRows([...counts.values()])}
    order by 1, 2, 3, 4, 5
    on conflict (site_id, environment, page, hour, device) do update set signals = h.signals + excluded.signals`.execute(
    trx,
  );
}

/**
 * Deletes a site's signals of these sessions (privacy erasure) or older than a time (retention) and takes them out of
 * their hours' counts in the same statement, as decrements (they commute with the processor's increments to the same
 * hours). An hour whose signals are all gone keeps a row of 0 until retention removes it. Returns the signals deleted.
 */
export async function deleteSignals(
  db: Kysely<any>,
  siteId: string,
  which: { sessionIds: readonly string[] } | { before: Date },
): Promise<number> {
  const where =
    'sessionIds' in which ? sql`g.session_id = any(${[...which.sessionIds]}::text[])` : sql`g.ts < ${which.before}`;
  // NOTE: raw SQL: a data-modifying CTE, so the deleted rows and the decrements are one statement.
  const { rows } = await sql<{ n: number }>`
    with gone as (
      delete from signals g where g.site_id = ${siteId} and ${where}
      returning g.environment, g.page, g.ts, g.device, g.vx, g.vy
    ),
    sums as (
      select environment, page, ${hourOf(sql.ref('ts'))} as hour, device, count(*)::int as n
      from gone where vx is not null and vy is not null
      group by 1, 2, 3, 4
    ),
    moved as (
      update page_heatmap_hours h set signals = h.signals - sums.n
      from sums
      where h.site_id = ${siteId} and h.environment = sums.environment and h.page = sums.page and h.hour = sums.hour
        and h.device = sums.device
    )
    select count(*)::int as n from gone`.execute(db);
  if ('before' in which) {
    await sql`delete from page_heatmap_hours where site_id = ${siteId} and hour < ${which.before} and signals = 0`.execute(
      db,
    );
  }
  return rows[0]?.n ?? 0;
}
