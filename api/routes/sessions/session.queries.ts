import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { environmentWhere } from '../../../shared/db/environment.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';

/** Most events one timeline lists; a longer session is cut there and says so (`truncated`). */
export const SESSION_TIMELINE_MAX_EVENTS = 5000;

export interface TimelineRow {
  type: string;
  signal: string | null;
  selector: string | null;
  page: string;
  ts: Date;
}

/**
 * The stored session `id` of the site and environment: the id as sent, else without the `ses_` prefix the API adds
 * for display.
 */
export async function findSession(db: Kysely<Database>, siteId: string, environment: Environment, sessionId: string) {
  const ids = sessionId.startsWith('ses_') ? [sessionId, sessionId.slice(4)] : [sessionId];
  const rows = await db
    .selectFrom('sessions')
    .select(['id', 'started_at'])
    .where('site_id', '=', siteId)
    .where('id', 'in', ids)
    .where(environmentWhere(environment))
    .execute();
  // The id exactly as sent wins over the stripped one.
  return rows.find((r) => r.id === sessionId) ?? rows[0];
}

/** Page views and signals of the session in the environment, in the order they happened, at most SESSION_TIMELINE_MAX_EVENTS + 1. */
export async function sessionTimeline(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  sessionId: string,
): Promise<TimelineRow[]> {
  return db
    .selectFrom('events')
    .select(['type', 'signal', 'selector', 'page', 'ts'])
    .where('site_id', '=', siteId)
    .where('session_id', '=', sessionId)
    .where(environmentWhere(environment))
    .where('type', 'in', ['page_view', 'signal'])
    .orderBy('ts')
    .orderBy('received_at')
    .orderBy('id')
    .limit(SESSION_TIMELINE_MAX_EVENTS + 1)
    .execute();
}
