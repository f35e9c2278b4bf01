import { sql, type Transaction } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { newId } from '../../../shared/ids.ts';
import { forgetSessionRollups } from '../../../shared/db/session-rollups.ts';
import { deleteSignals } from '../../../shared/db/page-heatmap-hours.ts';
import { deleteJourneySteps } from '../../../shared/db/journey-steps.ts';

export interface ErasedCounts {
  sessions: number;
  events: number;
  signals: number;
}

/** The ids of a site's sessions an anonymous id (identify()) was seen with. */
export async function sessionsOfAnonymousId(
  trx: Transaction<Database>,
  siteId: string,
  anonymousId: string,
): Promise<string[]> {
  return (
    await trx
      .selectFrom('sessions')
      .select('id')
      .where('site_id', '=', siteId)
      .where('anonymous_id', '=', anonymousId)
      .execute()
  ).map((r) => r.id);
}

/**
 * Deletes what the site stored of these sessions: events, signals, the session rows, and their entries in issue
 * evidence; then records the erasure for the processor owning the site (which rebuilds the site's windows and
 * rewrites its scores, issues and elements from what remains). Locks the site row: erasures of one site queue.
 */
export async function eraseSessions(
  trx: Transaction<Database>,
  siteId: string,
  sessionIds: readonly string[],
): Promise<ErasedCounts> {
  await trx.selectFrom('sites').select('id').where('id', '=', siteId).forUpdate().execute();
  if (sessionIds.length === 0) return { sessions: 0, events: 0, signals: 0 };
  const ids = [...sessionIds];
  await forgetSessionRollups(trx, siteId, { ids });
  const events = await trx
    .deleteFrom('events')
    .where('site_id', '=', siteId)
    .where('session_id', 'in', ids)
    .executeTakeFirst();
  const signals = await deleteSignals(trx, siteId, { sessionIds: ids });
  await deleteJourneySteps(trx, siteId, { sessionIds: ids });
  const sessions = await trx
    .deleteFrom('sessions')
    .where('site_id', '=', siteId)
    .where('id', 'in', ids)
    .executeTakeFirst();
  // Evidence lists sessions by id: the erased ones leave it (the processor's rewrite recounts the rest).
  await sql`
    update ux_issues set evidence = coalesce((select jsonb_agg(e) from jsonb_array_elements(evidence) e where not (e->>'session_id' = any(${ids}))), '[]'::jsonb)
     where site_id = ${siteId} and exists (select 1 from jsonb_array_elements(evidence) e where e->>'session_id' = any(${ids}))`.execute(
    trx,
  );
  await trx.insertInto('privacy_erasures').values({ id: newId(), site_id: siteId }).execute();
  return {
    sessions: Number(sessions.numDeletedRows),
    events: Number(events.numDeletedRows),
    signals,
  };
}
