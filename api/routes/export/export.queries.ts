import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { environmentWhere } from '../../../shared/db/environment.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';

/** Rows one read of the export fetches: about the most the export holds in memory at once. */
export const EXPORT_CHUNK_ROWS = 2000;

export const EXPORT_COLUMNS = [
  'id',
  'ts',
  'session_id',
  'type',
  'page',
  'signal',
  'name',
  'selector',
  'label',
  'x',
  'y',
  'vx',
  'vy',
  'px',
  'py',
  'value',
  'device',
  'source',
  'app_version',
  'environment',
  'meta',
] as const;

/** An exported row and `pos`, its exact timestamp as text (a Date keeps milliseconds, the column microseconds). */
export type ExportRow = Awaited<ReturnType<typeof rowsAfter>>[number];

const selectRows = (db: Kysely<Database>, siteId: string, range: { to: Date; environment: Environment }) =>
  db
    .selectFrom('events')
    .select(EXPORT_COLUMNS)
    .select(sql<string>`ts::text`.as('pos'))
    .where('site_id', '=', siteId)
    .where('ts', '<', range.to)
    .where(environmentWhere(range.environment));

/** Up to `limit` events after the position (or from `from`), by time: the (site_id, ts) index serves it directly. */
function rowsAfter(
  db: Kysely<Database>,
  siteId: string,
  range: { from?: Date; to: Date; environment: Environment },
  after: string | null,
  limit: number,
) {
  return selectRows(db, siteId, range)
    .$if(after === null && range.from !== undefined, (qb) => qb.where('ts', '>=', range.from!))
    .$if(after !== null, (qb) => qb.where(sql<boolean>`ts > ${after}::timestamptz`))
    .orderBy('ts')
    .limit(limit)
    .execute();
}

/**
 * The site's events of one environment in [from, to) in time order, chunk by chunk: a keyset cursor on the timestamp. Each chunk is
 * one short indexed query and nothing is held between chunks (no transaction, no connection: the embedded database
 * is one connection that ingest and the processor share). A chunk that ends inside a run of equal timestamps stops
 * before that run and reads the whole run at once, so no row is skipped or repeated at a chunk boundary.
 * Events stored after the export began appear when they fall after the cursor and before `to`.
 */
export async function* exportChunks(
  db: Kysely<Database>,
  siteId: string,
  range: { from?: Date; to: Date; environment: Environment },
): AsyncGenerator<ExportRow[]> {
  let after: string | null = null;
  for (;;) {
    const rows = await rowsAfter(db, siteId, range, after, EXPORT_CHUNK_ROWS);
    if (rows.length < EXPORT_CHUNK_ROWS) {
      if (rows.length > 0) yield rows;
      return;
    }
    const lastPos = rows[rows.length - 1].pos;
    const before = rows.filter((r) => r.pos !== lastPos);
    if (before.length > 0) yield before;
    yield await selectRows(db, siteId, range).where(sql<boolean>`ts = ${lastPos}::timestamptz`).orderBy('id').execute();
    after = lastPos;
  }
}
