import { sql, type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { inScope, onPage } from '../../shared/db/scope.ts';
import type { Environment } from '../../shared/domain/deploy-verification.ts';

/** Which elements: a site's environment, optionally one page, a window of the list. */
export interface ElementFilter {
  site_id: string;
  environment: Environment;
  page?: string;
  limit: number;
  offset: number;
}

/** The elements a filter names, as a query to select from (the list and its count read the same rows). */
const filtered = (db: Kysely<Database>, q: Omit<ElementFilter, 'limit' | 'offset'>) =>
  db.selectFrom('page_elements').where(q.page === undefined ? inScope(q) : onPage({ ...q, page: q.page }));

/**
 * Elements with friction signals in the last 7 days (written by the processor), most friction signals first as the
 * spec says ("top elements by friction signal count"); equal counts by friction score. A site's list is read in that
 * order from `elements_by_signal_count_idx` (migration 0330) and stops at the window instead of sorting all of the
 * site's elements; a page's few are sorted from the primary key.
 */
export function pageOfElements(db: Kysely<Database>, q: ElementFilter) {
  return filtered(db, q)
    .select([
      'page',
      'selector',
      'label',
      'signals',
      'signal_count',
      'friction_score',
      'dominant_signal',
      'affected_users',
      'recommendation',
      'last_signal_at',
    ])
    .orderBy('signal_count', 'desc')
    .orderBy('friction_score', 'desc')
    .orderBy('page')
    .orderBy('cluster_selector')
    .limit(q.limit)
    .offset(q.offset);
}

/** An element as the page view shows it (PageElementSchema's fields). */
export interface PageElementFields {
  selector: string;
  label: string | null;
  signals: Record<string, number>;
  signal_count: number;
  friction_score: number;
  dominant_signal: string | null;
}

/**
 * The page view's elements (pageOfElements of one page, the first `limit`) as one JSON array of the fields it shows,
 * built by the database: a subquery for a statement to embed, read by JSON.parse instead of row by row.
 */
export function pageElementsJson(db: Kysely<Database>, q: Omit<ElementFilter, 'offset' | 'page'> & { page: string }) {
  return sql<PageElementFields[]>`(select coalesce(json_agg(json_build_object('selector', e.selector, 'label', e.label,
      'signals', e.signals, 'signal_count', e.signal_count, 'friction_score', e.friction_score,
      'dominant_signal', e.dominant_signal)
    order by e.signal_count desc, e.friction_score desc, e.page, e.cluster_selector), '[]')
    from (${pageOfElements(db, { ...q, offset: 0 }).select('cluster_selector')}) e)`;
}

export type ElementRow = Awaited<ReturnType<ReturnType<typeof pageOfElements>['execute']>>[number];

/**
 * A window of the list and the count of all the elements the filter matches, in one statement: one snapshot, so
 * they agree while the processor writes, without a transaction's two more round trips. The count is the left side of
 * the join, so a window past the end still answers it (one row of nulls).
 */
export async function listElements(
  db: Kysely<Database>,
  q: ElementFilter,
): Promise<{ rows: ElementRow[]; total: number }> {
  const joined = await db
    .selectFrom(filtered(db, q).select(sql<number>`count(*)::int`.as('total')).as('t'))
    .leftJoinLateral(pageOfElements(db, q).as('e'), (join) => join.onTrue())
    .selectAll('e')
    .select('t.total')
    .execute();
  const total = joined[0]?.total ?? 0;
  // The left join's row of nulls when the window is empty: every listed element has a page.
  const rows = joined.filter((r) => r.page !== null) as ElementRow[];
  return { rows, total };
}
