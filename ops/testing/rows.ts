/**
 * Test-only: rows as the processor writes them, inserted directly (fast, and independent of the pipeline under
 * test); each takes what the test cares about and fills the rest with plain values.
 */
import { randomUUID } from 'node:crypto';
import type { Insertable, Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';

type Db = Kysely<Database>;

/** A session of `views` page views on `page`, no signal, started now. */
export async function insertSessionRow(
  db: Db,
  s: { siteId: string; id: string; page: string; views: number },
): Promise<void> {
  const now = new Date();
  await db
    .insertInto('sessions')
    .values({
      site_id: s.siteId,
      id: s.id,
      started_at: now,
      last_seen_at: now,
      device: 'desktop',
      source: null,
      referrer: null,
      app_version: null,
      environment: null,
      anonymous_id: null,
      first_page: s.page,
      last_page: s.page,
      event_count: s.views,
      page_views: s.views,
      signal_count: 0,
      conversions: 0,
      revenue: 0,
    })
    .execute();
}

/** The current hour's score of `page` over `sessions` sessions (one view each, one signal), stable. */
export async function insertPageScoreRow(
  db: Db,
  siteId: string,
  s: { page: string; score: number; sessions: number } & Partial<Insertable<Database['page_scores']>>,
): Promise<void> {
  const now = new Date();
  await db
    .insertInto('page_scores')
    .values({
      site_id: siteId,
      window_start: new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000),
      friction: 1,
      page_views: s.sessions,
      signal_count: 1,
      dominant_signal: null,
      trend: 'stable',
      updated_at: now,
      ...s,
    })
    .execute();
}

/** An open issue of dead clicks on `selector` of `page`, signalled now. */
export async function insertIssueRow(
  db: Db,
  siteId: string,
  s: { page: string; selector: string } & Partial<Insertable<Database['ux_issues']>>,
): Promise<void> {
  const now = new Date();
  await db
    .insertInto('ux_issues')
    .values({
      id: randomUUID(),
      site_id: siteId,
      cluster_selector: s.selector,
      signal_type: 'dead_click',
      label: null,
      title: `Dead clicks on ${s.selector}`,
      hypothesis: 'h',
      signal_count: 5,
      affected_sessions: 3,
      severity: 20,
      status: 'open',
      note: null,
      assigned_to: null,
      merged_into: null,
      first_signal_at: now,
      last_signal_at: now,
      resolved_at: null,
      ...s,
    })
    .execute();
}

/** An active org-wide webhook endpoint for `alert.triggered` at `url`; `more` sets the other columns. Resolves to its id. */
export async function insertWebhookEndpointRow(
  db: Db,
  orgId: string,
  url: string,
  more: Partial<Insertable<Database['webhook_endpoints']>> = {},
): Promise<string> {
  const id = randomUUID();
  await db
    .insertInto('webhook_endpoints')
    .values({
      id,
      org_id: orgId,
      site_id: null,
      url,
      description: null,
      events: ['alert.triggered'],
      active: true,
      secret_sealed: 'sealed',
      deleted_at: null,
      ...more,
    })
    .execute();
  return id;
}
