import { sql, type Kysely } from 'kysely';

/**
 * Each page's current score (its latest `page_scores` row) was picked on every read of the scores route, of its short
 * form and of the deploys route's overall score: a `distinct on (page)` over every hourly row of the 7-day window.
 * The processor writes one row per page and hour, so a week of a 2,000-page site is 336,000 rows to walk for 2,000
 * answers (about 185 ms of PostgreSQL CPU a request on this machine at load 25-30, against 0.8 ms for 2,000 rows).
 * `page_current_scores` keeps the latest row of each (site, environment, page), kept by a row trigger on `page_scores`,
 * so every writer (processor store, recompute, derive/demo, erasure's rewrite, a site's deletion) keeps it in the
 * same transaction: an insert or update newer than the kept row replaces it; deleting (or moving) the kept row puts
 * the page's latest remaining row in its place. The readers still apply the window on `window_start`: the latest row
 * is in the window exactly when any row of the page is, so the answers are the same.
 * Where `page_scores` is a TimescaleDB hypertable, its retention policy drops chunks older than 90 days without row
 * triggers: a page whose rows all went keeps its last row here, older than any window a reader asks (7 days).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table page_current_scores (
      site_id uuid not null, environment text not null, page text not null, window_start timestamptz not null,
      score real not null, sessions integer not null, dominant_signal text, trend text not null,
      updated_at timestamptz not null,
      constraint page_current_scores_pkey primary key (site_id, environment, page)
    )`.execute(db);
  await sql`create or replace function page_current_scores_keep() returns trigger language plpgsql as $fn$
begin
  -- The kept row deleted, or its key or hour changed: the page's latest remaining row replaces it (or none).
  if tg_op = 'DELETE' or (tg_op = 'UPDATE' and (old.site_id, old.environment, old.page, old.window_start)
                             is distinct from (new.site_id, new.environment, new.page, new.window_start)) then
    if exists (select 1 from page_current_scores c
               where c.site_id = old.site_id and c.environment = old.environment and c.page = old.page
                 and c.window_start = old.window_start) then
      delete from page_current_scores
      where site_id = old.site_id and environment = old.environment and page = old.page;
      insert into page_current_scores (site_id, environment, page, window_start, score, sessions, dominant_signal, trend, updated_at)
      select site_id, environment, page, window_start, score, sessions, dominant_signal, trend, updated_at
      from page_scores
      where site_id = old.site_id and environment = old.environment and page = old.page
      order by window_start desc limit 1;
    end if;
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    insert into page_current_scores as c (site_id, environment, page, window_start, score, sessions, dominant_signal, trend, updated_at)
    values (new.site_id, new.environment, new.page, new.window_start, new.score, new.sessions, new.dominant_signal, new.trend, new.updated_at)
    on conflict (site_id, environment, page) do update set
      window_start = excluded.window_start, score = excluded.score, sessions = excluded.sessions,
      dominant_signal = excluded.dominant_signal, trend = excluded.trend, updated_at = excluded.updated_at
    where c.window_start <= excluded.window_start;
  end if;
  return null;
end
$fn$`.execute(db);
  await sql`
    create trigger page_current_scores_keep after insert or update or delete on page_scores
    for each row execute function page_current_scores_keep()`.execute(db);
  await sql`
    insert into page_current_scores (site_id, environment, page, window_start, score, sessions, dominant_signal, trend, updated_at)
    select distinct on (site_id, environment, page)
      site_id, environment, page, window_start, score, sessions, dominant_signal, trend, updated_at
    from page_scores
    order by site_id, environment, page, window_start desc`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists page_current_scores_keep on page_scores`.execute(db);
  await sql`drop function if exists page_current_scores_keep()`.execute(db);
  await sql`drop table if exists page_current_scores`.execute(db);
}
