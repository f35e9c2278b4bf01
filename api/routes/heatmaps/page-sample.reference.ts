import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { onPage, type PageScope } from '../../../shared/db/scope.ts';
import { PAGE_HEATMAP_DAYS, PAGE_HEATMAP_MAX_POINTS, type PageHeatmapRow } from './heatmaps.queries.ts';

/**
 * The page heatmap's sample by definition, for tests only: every matching signal of the window numbered in (ts,
 * event_id) order and every k-th kept (the route's query before migration 0380, which read the whole window). The
 * route's `sampledPageSignals` must give the same rows in the same order.
 */
export async function numberedPageSample(
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
  return { rows: rows.map(({ total: _, ...r }) => r as PageHeatmapRow), total: rows[0]?.total ?? 0 };
}
