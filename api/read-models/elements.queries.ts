import { sql, type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { PREPARED } from '../../shared/db/prepared-reads.ts';
import { inScope, onPage } from '../../shared/db/scope.ts';
import { round1Real } from '../../shared/db/sql.ts';
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

/**
 * pageElementsJson's elements as the JSON text of their presentPageElement forms, in the same order, written by the
 * database (page-view-text.int.test.ts holds it to JSON.stringify of presentPageElement). `signals` is written compact
 * in jsonb's key order (what JSON.parse of its text keeps), each count as float8 text (a count's digits, as JavaScript's).
 */
export function pageElementsText(db: Kysely<Database>, q: Omit<ElementFilter, 'offset' | 'page'> & { page: string }) {
  const signals = sql<string>`(select '{' || coalesce(string_agg(to_json(t.k)::text || ':' || (t.v::text::float8)::text, ',' order by t.o), '') || '}'
    from jsonb_each(e.signals) with ordinality as t(k, v, o))`;
  // presentPageElement's fields in its order, written by row_to_json (compact; `signals` as the json of that text).
  const element = sql`select e.selector, e.label, ${signals}::json as signals,
      ${round1Real(sql.ref('e.friction_score'))} as friction_score, e.signal_count, e.dominant_signal`;
  return sql<string>`(select '[' || coalesce(string_agg(row_to_json(p)::text, ','
      order by e.signal_count desc, e.friction_score desc, e.page, e.cluster_selector), '') || ']'
    from (${pageOfElements(db, { ...q, offset: 0 }).select('cluster_selector')}) e cross join lateral (${element}) p)`;
}

export type ElementRow = Awaited<ReturnType<ReturnType<typeof pageOfElements>['execute']>>[number];

/**
 * A window of the list and the count of all the elements the filter matches, in one statement kept prepared
 * (PREPARED: parsed once per connection, its plan kept): one snapshot, so
 * they agree while the processor writes, without a transaction's two more round trips. The window comes as one JSON
 * array of positional rows (its time as epoch ms, truncated as the driver truncates a timestamp into a Date): one
 * JSON.parse instead of the driver decoding each row's ten columns, its jsonb and its timestamp.
 */
export async function listElements(
  db: Kysely<Database>,
  q: ElementFilter,
): Promise<{ rows: ElementRow[]; total: number }> {
  const window = pageOfElements(db, q).select(['cluster_selector']);
  const statement = db.selectNoFrom([
    filtered(db, q).select(sql<number>`count(*)::int`.as('n')).as('total'),
    db
      .selectFrom(window.as('e'))
      .select(
        sql<string | null>`json_agg(json_build_array(e.page, e.selector, e.label, e.signals, e.signal_count,
            e.friction_score, e.dominant_signal, e.affected_users, e.recommendation,
            floor(extract(epoch from e.last_signal_at) * 1000)::float8)
            order by e.signal_count desc, e.friction_score desc, e.page, e.cluster_selector)::text`.as('rows'),
      )
      .as('rows'),
  ]);
  const {
    rows: [row],
  } = await sql<{ total: number | null; rows: string | null }>`${PREPARED}${statement}`.execute(db);
  const list = JSON.parse(row.rows ?? '[]') as unknown[][];
  const rows: ElementRow[] = list.map((r) => ({
    page: r[0] as string,
    selector: r[1] as string,
    label: r[2] as string | null,
    signals: r[3] as ElementRow['signals'],
    signal_count: r[4] as number,
    friction_score: r[5] as number,
    dominant_signal: r[6] as string | null,
    affected_users: r[7] as number,
    recommendation: r[8] as string | null,
    last_signal_at: new Date(r[9] as number),
  }));
  return { rows, total: row.total ?? 0 };
}
