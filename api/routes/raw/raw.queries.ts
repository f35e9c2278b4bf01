import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { environmentWhere } from '../../../shared/db/environment.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';

/** Columns of a table in this database (read once per table: migrations only ever add columns between starts). */
const columnsCache = new Map<string, Promise<string[]>>();
export function tableColumns(db: Kysely<Database>, table: string): Promise<string[]> {
  let cols = columnsCache.get(table);
  if (!cols) {
    cols = sql<{ column_name: string }>`
      select column_name from information_schema.columns
      where table_schema = current_schema() and table_name = ${table} order by ordinal_position`
      .execute(db)
      .then((r) => r.rows.map((c) => c.column_name));
    columnsCache.set(table, cols);
    cols.catch(() => columnsCache.delete(table));
  }
  return cols;
}

/**
 * Up to `limit` rows of one site in `table`, ordered by `sort` (a column the caller checked exists), of one environment
 * when the table has an `environment` column (every raw table but `alerts`, which are production's).
 */
export async function rawRows(
  db: Kysely<Database>,
  q: {
    table: string;
    siteId: string;
    environment: Environment | null;
    sort: string;
    order: 'asc' | 'desc';
    limit: number;
  },
): Promise<Record<string, unknown>[]> {
  const { rows } = await sql<Record<string, unknown>>`
    select * from ${sql.table(q.table)} where site_id = ${q.siteId} ${q.environment === null ? sql`` : sql`and ${environmentWhere(q.environment)}`}
    order by ${sql.ref(q.sort)} ${sql.raw(q.order === 'asc' ? 'asc' : 'desc')} nulls last
    limit ${q.limit}`.execute(db);
  return rows;
}
