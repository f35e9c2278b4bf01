import { sql, type Kysely } from 'kysely';
import { rebuildPageWeightedSignals } from '../session-rollups.ts';

/**
 * Revenue and recommendations split an issue page's viewers into calm (no weighted signal of the session on the page
 * in the window) and not: they read the window's page views of those pages from `events` (no page index: every page
 * view of 30 days) and probed `events` once per viewer for its signals on the page. The viewers now come from
 * `page_viewers` (migration 0222), and `page_weighted_signals` keeps, per site, environment, page and session, the time
 * of the session's last weighted signal on the page: a session had one since a time exactly when its last one is since
 * then, one probe of the primary key (named after the calm probe) per viewer. The processor keeps it in the batch
 * transaction (processor/store/rollups.store.ts); the backfill reads `signals` (the signal events' mirror, 7 % of the
 * rows).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table page_weighted_signals (
      site_id uuid not null, environment text not null, page text not null, session_id text not null,
      last_signal_at timestamptz not null,
      constraint revenue_calm_probe_pkey primary key (site_id, environment, page, session_id)
    )`.execute(db);
  await sql`select set_config('statement_timeout', '0', true)`.execute(db);
  await rebuildPageWeightedSignals(db);
  // The viewers' sessions from the index itself (an index-only scan; the page route's count reads the same prefix):
  // at 1M demo events the 279k viewers of the issue pages were 2.8 s of heap fetches (load average 27).
  await sql`drop index page_viewers_recent_idx`.execute(db);
  await sql`create index page_viewers_recent_idx on page_viewers (site_id, environment, page, last_view_at)
            include (session_id)`.execute(db);
  // The sessions that met each issue (a signal of its type on its element and page in the window): the page's signals
  // index read every signal of the page per issue and filtered 99 % out (12 s for 332 issues at 1M, load 27).
  await sql`create index revenue_issue_sessions_idx on signals (site_id, environment, page, selector, signal_type, ts)
            include (session_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists revenue_issue_sessions_idx`.execute(db);
  await sql`drop index page_viewers_recent_idx`.execute(db);
  await sql`create index page_viewers_recent_idx on page_viewers (site_id, environment, page, last_view_at)`.execute(
    db,
  );
  await sql`drop table if exists page_weighted_signals`.execute(db);
}
