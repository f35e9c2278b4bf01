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
