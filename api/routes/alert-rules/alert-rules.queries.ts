import type { Kysely, Selectable, Transaction, Updateable } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import type { AlertRuleTable } from '../../../shared/db/tables/alerts.table.ts';

type Db = Kysely<Database> | Transaction<Database>;
export type AlertRuleRow = Selectable<AlertRuleTable>;

export async function listAlertRules(db: Db, siteId: string): Promise<AlertRuleRow[]> {
  return db
    .selectFrom('alert_rules')
    .selectAll()
    .where('site_id', '=', siteId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The rule of a live site, locked for the caller's transaction. */
export async function findAlertRuleForUpdate(
  trx: Transaction<Database>,
  id: string,
): Promise<(AlertRuleRow & { org_id: string }) | undefined> {
  return trx
    .selectFrom('alert_rules as r')
    .innerJoin('sites as s', 's.id', 'r.site_id')
    .selectAll('r')
    .select('s.org_id')
    .where('r.id', '=', id)
    .where('s.deleted_at', 'is', null)
    .forUpdate('r')
    .executeTakeFirst();
}

export async function insertAlertRule(
  trx: Transaction<Database>,
  row: Omit<AlertRuleRow, 'created_at' | 'updated_at' | 'last_fired_at'>,
): Promise<AlertRuleRow> {
  return trx.insertInto('alert_rules').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateAlertRule(
  trx: Transaction<Database>,
  id: string,
  set: Updateable<AlertRuleTable>,
): Promise<AlertRuleRow> {
  return trx.updateTable('alert_rules').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function deleteAlertRule(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.deleteFrom('alert_rules').where('id', '=', id).execute();
}
