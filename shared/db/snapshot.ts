import type { Kysely, Transaction } from 'kysely';
import type { Database } from './database.ts';

/**
 * Runs reads against one snapshot (a read-only repeatable-read transaction), so a page of rows and its total agree
 * even while the processor writes: two separate queries could count a row the page did not list.
 */
export function inOneSnapshot<T>(db: Kysely<Database>, fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(fn);
}
