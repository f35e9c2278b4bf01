import { sql, type Kysely } from 'kysely';
import { rebuildPageViewers } from '../session-rollups.ts';

/**
 * The page route's "sessions that viewed the page in the last 7 days" read every event of the site's last 7 days
 * (no index on events by page: 6.4 s from a cold cache at 10M demo events). `page_viewers` keeps, per site,
 * environment, page and session, the time of the session's last view of the page: the sessions with a view since a
 * time are exactly the rows whose last view is since then, counted from `page_viewers_recent_idx`. The processor
 * keeps it in the batch transaction (processor/store/rollups.store.ts); the backfill reads the page views already
 * stored.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table page_viewers (
      site_id uuid not null,
      environment text not null,
      page text not null,
      session_id text not null,
      last_view_at timestamptz not null,
      constraint page_viewers_pkey primary key (site_id, environment, page, session_id)
    )`.execute(db);
  // The backfill reads every stored row (10M events: a minute or more on a busy machine), longer than the pool's
  // per-statement timeout; lifted for this migration's transaction only.
  await sql`select set_config('statement_timeout', '0', true)`.execute(db);
  await rebuildPageViewers(db);
  await sql`create index page_viewers_recent_idx on page_viewers (site_id, environment, page, last_view_at)`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists page_viewers`.execute(db);
}
