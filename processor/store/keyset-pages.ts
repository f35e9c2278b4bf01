import { sql, type SelectQueryBuilder } from 'kysely';

/** Where a keyset read stopped: the last row's `ts` as text (microseconds kept: a Date would round them) and id. */
export interface TsCursor {
  ts: string;
  id: string;
}

/** `ts` as text, selected as `ts_key`: what the cursor keeps. */
export const tsKey = () => sql<string>`ts::text`.as('ts_key');

/**
 * Pages of a read in (ts, id) order, `chunkRows` rows at most each, so a start-up rebuild never holds a site's
 * whole window as one result set: `page` reads the rows after the cursor (all rows when it is undefined).
 */
export async function* keysetPages<R extends { ts_key: string }>(
  chunkRows: number,
  page: (after: TsCursor | undefined) => Promise<R[]>,
  idOf: (row: R) => string,
): AsyncGenerator<R[]> {
  let after: TsCursor | undefined;
  for (;;) {
    const rows = await page(after);
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < chunkRows) return;
    const last = rows[rows.length - 1] as R;
    after = { ts: last.ts_key, id: idOf(last) };
  }
}

/** `q` narrowed to the rows after `after` in (ts, `idColumn`) order, `chunkRows` of them: one page of `keysetPages`. */
export const pageAfter = <DB, TB extends keyof DB, O>(
  q: SelectQueryBuilder<DB, TB, O>,
  idColumn: string,
  after: TsCursor | undefined,
  chunkRows: number,
): SelectQueryBuilder<DB, TB, O> =>
  q
    .$if(after !== undefined, (p) =>
      p.where(sql<boolean>`(ts, ${sql.ref(idColumn)}) > (${sql`${after?.ts}::timestamptz`}, ${after?.id})`),
    )
    .orderBy(sql.ref('ts'))
    .orderBy(sql.ref(idColumn))
    .limit(chunkRows);
