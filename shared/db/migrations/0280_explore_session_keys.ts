import { sql, type Kysely } from 'kysely';
import { rebuildSessionKeys } from '../session-rollups.ts';

/**
 * The Explorer's page and signal filters and groups probed `events` once per session of the window (a session's
 * events through events_session_idx): at 10M demo events the dwell by page over 30 days ran past the 60 s statement
 * timeout (503). `explore_session_keys` keeps, per site and session, each distinct page it had an event on and each
 * signal type it met: a filter is a semi-join and a group a join on it, over one narrow row per (session, page)
 * instead of every event. The
 * processor keeps it in the batch transaction (processor/store/rollups.store.ts); the backfill reads the stored events.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table explore_session_keys (
      site_id uuid not null,
      session_id text not null,
      kind text not null check (kind in ('page', 'signal')),
      key text not null,
      constraint explore_session_keys_pkey primary key (site_id, session_id, kind, key)
    )`.execute(db);
  // The backfill reads every stored event (10M: a minute or more on a busy machine), longer than the pool's
  // per-statement timeout; lifted for this migration's transaction only.
  await sql`select set_config('statement_timeout', '0', true)`.execute(db);
  await rebuildSessionKeys(db);
  // No second index by (site, kind, key): with a \`contains\` filter its key is no index condition, and a planner that
  // believes the window small (a table not analyzed yet) probed every key of the site once per session through it
  // (over 60 s for 3,000 sessions). The primary key answers a session's probe, and a hash join the whole window.
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists explore_session_keys`.execute(db);
}
