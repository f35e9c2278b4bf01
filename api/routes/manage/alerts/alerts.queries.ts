import type { Selectable, Transaction } from 'kysely';
import type { Database } from '../../../../shared/db/database.ts';
import type { AlertTable } from '../../../../shared/db/tables/alerts.table.ts';

export type AlertRow = Selectable<AlertTable>;

/** An alert of a live site with its org, locked for the caller's transaction. */
export async function findAlertForUpdate(
  trx: Transaction<Database>,
  id: string,
): Promise<(AlertRow & { org_id: string }) | undefined> {
  return trx
    .selectFrom('alerts as a')
    .innerJoin('sites as s', 's.id', 'a.site_id')
    .selectAll('a')
    .select('s.org_id')
    .where('a.id', '=', id)
    .where('s.deleted_at', 'is', null)
    .forUpdate('a')
    .executeTakeFirst();
}

export async function setAlertStatus(
  trx: Transaction<Database>,
  id: string,
  s: { status: string; resolvedReason: string | null; now: Date },
): Promise<AlertRow> {
  return trx
    .updateTable('alerts')
    .set((eb) => ({
      status: s.status,
      updated_at: s.now,
      // The first acknowledgement is kept: skipping straight to investigating or resolved acknowledges too.
      acknowledged_at: eb.fn.coalesce('acknowledged_at', eb.val(s.now)),
      resolved_at: s.status === 'resolved' ? s.now : null,
      resolved_reason: s.status === 'resolved' ? s.resolvedReason : null,
    }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
