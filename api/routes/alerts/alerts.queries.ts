import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { inOneSnapshot } from '../../../shared/db/snapshot.ts';
import type { AlertRow } from './alerts.manage.queries.ts';
import type { AlertListQuery } from './alerts.schema.ts';

/** A site's alerts, newest first, with the count of all that match (both from one snapshot). */
export async function listAlerts(
  db: Kysely<Database>,
  q: AlertListQuery,
): Promise<{ rows: AlertRow[]; total: number }> {
  return inOneSnapshot(db, async (trx) => {
    let base = trx.selectFrom('alerts').where('site_id', '=', q.site_id);
    if (q.status) base = base.where('status', '=', q.status);
    const rows = await base
      .selectAll()
      .orderBy('triggered_at', 'desc')
      .orderBy('id')
      .limit(q.limit)
      .offset(q.offset)
      .execute();
    const count = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return { rows, total: Number(count.n) };
  });
}

/** One alert of the site, or undefined (missing, or another site's). */
export async function findAlert(db: Kysely<Database>, siteId: string, id: string): Promise<AlertRow | undefined> {
  return db.selectFrom('alerts').selectAll().where('site_id', '=', siteId).where('id', '=', id).executeTakeFirst();
}
