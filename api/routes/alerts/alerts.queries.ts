import { type Kysely, type Transaction } from 'kysely';
import { type Database } from '../../../shared/db/database.ts';
import type { AlertRow } from '../../read-models/alerts.presenter.ts';
import { pageWithTotal } from '../../../shared/db/snapshot.ts';
import { type AlertListQuery } from './alerts.schema.ts';

/** A site's alerts, newest first, with the count of all that match (both from one snapshot). */
export async function listAlerts(
  db: Kysely<Database>,
  q: AlertListQuery,
): Promise<{ rows: AlertRow[]; total: number }> {
  return pageWithTotal(
    db,
    (trx) =>
      trx
        .selectFrom('alerts')
        .where('site_id', '=', q.site_id)
        .$if(q.status !== undefined, (qb) => qb.where('status', '=', q.status!)),
    (base) => base.selectAll().orderBy('triggered_at', 'desc').orderBy('id').limit(q.limit).offset(q.offset).execute(),
  );
}

/** One alert of the site, or undefined (missing, or another site's). */
export async function findAlert(db: Kysely<Database>, siteId: string, id: string): Promise<AlertRow | undefined> {
  return db.selectFrom('alerts').selectAll().where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
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
