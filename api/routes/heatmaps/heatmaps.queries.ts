import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { onPage, type PageScope } from '../../../shared/db/scope.ts';

/**
 * Signal types an element heatmap shows (spec): clicks that went nowhere or were refused. `element_heatmap_clicks_idx`
 * (migration 0330) holds exactly these: a change here needs a new index.
 */
export const ELEMENT_HEATMAP_SIGNALS = ['rage_click', 'dead_click', 'disabled_element_attempt'] as const;
/** The element heatmap draws from this many most recent matching signals (spec). */
export const ELEMENT_HEATMAP_SOURCE = 800;
/** At most this many element points (spec). */
export const ELEMENT_HEATMAP_MAX_POINTS = 300;
/** At most this many page points (spec). */
export const PAGE_HEATMAP_MAX_POINTS = 500;
/** Days a page heatmap covers (spec). */
export const PAGE_HEATMAP_DAYS = 30;

/**
 * The most recent ELEMENT_HEATMAP_SOURCE clicking signals on the element that carry element coordinates,
 * oldest first (x, y: 0..1000 as stored). Ordered by time in SQL; the time itself is not selected (the answer has
 * none, and parsing 800 timestamps into dates was most of the rows' decoding).
 */
export async function recentElementSignals(db: Kysely<Database>, s: PageScope, selector: string) {
  const rows = await db
    .selectFrom('signals')
    .select(['signal_type', 'x', 'y'])
    .where(onPage(s))
    .where('selector', '=', selector)
    .where('signal_type', 'in', [...ELEMENT_HEATMAP_SIGNALS])
    .where('x', 'is not', null)
    .where('y', 'is not', null)
    .orderBy('ts', 'desc')
    .limit(ELEMENT_HEATMAP_SOURCE)
    .execute();
  return rows.reverse() as { signal_type: string; x: number; y: number }[];
}

export interface PageHeatmapRow {
  signal_type: string;
  vx: number;
  vy: number;
  px: number | null;
  py: number | null;
  selector: string | null;
  total: number;
}

/**
 * Signals of the page with viewport coordinates over the last PAGE_HEATMAP_DAYS, `device` `mobile` meaning phones
 * and tablets: a systematic sample of at most PAGE_HEATMAP_MAX_POINTS spread evenly over the period in time order
 * (every k-th signal, k = ceil(total / cap)), so a busy last day does not crowd out the month. Each row carries the
 * total it was drawn from.
 */
export async function sampledPageSignals(
  db: Kysely<Database>,
  s: PageScope,
  device: 'desktop' | 'mobile' | undefined,
  now: Date,
): Promise<{ rows: PageHeatmapRow[]; total: number }> {
  const since = new Date(now.getTime() - PAGE_HEATMAP_DAYS * 86_400_000);
  const devices = device === undefined ? null : device === 'desktop' ? ['desktop'] : ['mobile', 'tablet'];
  const matching = db
    .selectFrom('signals')
    .select(['signal_type', 'vx', 'vy', 'px', 'py', 'selector', 'ts'])
    .select([
      sql<number>`row_number() over (order by ts, event_id)`.as('rn'),
      sql<number>`count(*) over ()`.as('total'),
    ])
    .where(onPage(s))
    .where('ts', '>=', since)
    .where('vx', 'is not', null)
    .where('vy', 'is not', null)
    .$if(devices !== null, (qb) => qb.where('device', 'in', devices!));
  const rows = await db
    .selectFrom(matching.as('m'))
    .select(['signal_type', 'vx', 'vy', 'px', 'py', 'selector', sql<number>`total::int`.as('total')])
    .where(sql<boolean>`(rn - 1) % greatest(ceil(total / ${PAGE_HEATMAP_MAX_POINTS}::float8), 1)::bigint = 0`)
    .orderBy('rn')
    .limit(PAGE_HEATMAP_MAX_POINTS)
    .execute();
  return { rows: rows as PageHeatmapRow[], total: rows[0]?.total ?? 0 };
}
