import type { Selectable, Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';

/** Tables whose rows belong to one site and are changed by the manage routes after a tenancy check. */
export type SiteObjectTable = 'alerts' | 'alert_rules' | 'ux_issues';
/** A row of a site object's table with its site's org. */
export type SiteObject<T extends SiteObjectTable> = Selectable<Database[T]> & { site_id: string; org_id: string };

/**
 * A row of a live site with the site's org, locked for the caller's transaction: what a manage route reads before
 * it guards the tenancy and changes the row. Undefined for a missing row or one of a deleted site.
 */
export async function lockSiteObject<T extends SiteObjectTable>(
  trx: Transaction<Database>,
  table: T,
  id: string,
): Promise<SiteObject<T> | undefined> {
  // kysely cannot type a join on a table named by a type parameter: the query is written for one of them (every
  // table here has id and site_id) and its row typed by the table asked for.
  const from = `${table} as o` as 'alerts as o';
  const row = await trx
    .selectFrom(from)
    .innerJoin('sites as s', 's.id', 'o.site_id')
    .selectAll('o')
    .select('s.org_id')
    .where('o.id', '=', id)
    .where('s.deleted_at', 'is', null)
    .forUpdate('o')
    .executeTakeFirst();
  return row as SiteObject<T> | undefined;
}
