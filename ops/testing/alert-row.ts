/** Test-only: an alert row as the evaluator writes one (a spike on /checkout, fired now) unless `over` says otherwise. */
import { randomUUID } from 'node:crypto';
import type { Insertable, Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';

export async function insertAlertRow(
  db: Kysely<Database>,
  siteId: string,
  over: Partial<Insertable<Database['alerts']>> = {},
): Promise<string> {
  const id = over.id ?? randomUUID();
  await db
    .insertInto('alerts')
    .values({
      site_id: siteId,
      rule_id: null,
      rule_name: 'spike on /checkout',
      page: '/checkout',
      trigger_type: 'spike',
      score_before: 20,
      score_after: 55,
      triggered_at: new Date(),
      acknowledged_at: null,
      resolved_at: null,
      resolved_reason: null,
      ...over,
      id,
    })
    .execute();
  return id;
}
