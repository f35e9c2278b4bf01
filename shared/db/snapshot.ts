import { sql, type Kysely, type SelectQueryBuilder, type Transaction } from 'kysely';
import type { Database } from './database.ts';

/**
 * Runs reads against one snapshot (a read-only repeatable-read transaction), so a page of rows and its total agree
 * even while the processor writes: two separate queries could count a row the page did not list.
 */
export function inOneSnapshot<T>(db: Kysely<Database>, fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(fn);
}

/**
 * A page of the rows a filter matches and the count of all of them, from one snapshot (inOneSnapshot): `filter`
 * builds the filtered query, `page` selects, orders and limits it, and the total counts the same filter.
 */
export function pageWithTotal<DB, TB extends keyof DB, O, R>(
  db: Kysely<Database>,
  filter: (trx: Transaction<Database>) => SelectQueryBuilder<DB, TB, O>,
  page: (base: SelectQueryBuilder<DB, TB, O>) => Promise<R[]>,
): Promise<{ rows: R[]; total: number }> {
  return inOneSnapshot(db, async (trx) => {
    const base = filter(trx);
    const rows = await page(base);
    // kysely cannot narrow a selection on a query builder it only knows by type parameters: the row is `{ n }`.
    const count = (await base.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()) as { n: number };
    return { rows, total: count.n };
  });
}
