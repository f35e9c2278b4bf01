import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import type { AnnotationTable } from '../../../shared/db/tables/annotations.table.ts';

type Db = Kysely<Database> | Transaction<Database>;
export type AnnotationRow = Selectable<AnnotationTable>;

export async function insertAnnotation(
  trx: Transaction<Database>,
  a: Omit<AnnotationRow, 'created_at'>,
): Promise<AnnotationRow> {
  return trx.insertInto('annotations').values(a).returningAll().executeTakeFirstOrThrow();
}

/** Newest first by when they happened. */
export async function listAnnotations(db: Db, siteId: string, limit: number): Promise<AnnotationRow[]> {
  return db
    .selectFrom('annotations')
    .selectAll()
    .where('site_id', '=', siteId)
    .orderBy('occurred_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute();
}
