import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import type { AuditLogTable } from '../../../shared/db/tables/annotations.table.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** An audit entry as read back (the table's row without its org, which the caller already scoped by). */
export type AuditRow = Omit<Selectable<AuditLogTable>, 'org_id'>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What narrows a listing: one site (site-scoped keys), one actor (label or id), one action or `resource.*`. */
export interface AuditFilter {
  siteId?: string;
  actor?: string;
  action?: string;
}

/** The org's newest `limit` entries matching `filter`, newest first. */
export async function listAuditEntries(
  db: Db,
  orgId: string,
  limit: number,
  filter: AuditFilter = {},
): Promise<AuditRow[]> {
  let q = db.selectFrom('audit_log').where('org_id', '=', orgId);
  if (filter.siteId) q = q.where('site_id', '=', filter.siteId);
  const actor = filter.actor;
  if (actor !== undefined) {
    q = UUID.test(actor)
      ? q.where((eb) => eb.or([eb('actor_id', '=', actor.toLowerCase()), eb('actor', '=', actor)]))
      : q.where('actor', '=', actor);
  }
  // `_` is LIKE's one-character wildcard: escaped, so `alert_rule.*` matches only alert_rule's actions.
  if (filter.action?.endsWith('.*'))
    q = q.where('action', 'like', `${filter.action.slice(0, -1).replaceAll('_', '\\_')}%`);
  else if (filter.action !== undefined) q = q.where('action', '=', filter.action);
  return q
    .select([
      'id',
      'created_at',
      'site_id',
      'actor_type',
      'actor_id',
      'actor',
      'action',
      'target_type',
      'target_id',
      'summary',
    ])
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
