import { sql, type Kysely } from 'kysely';

/**
 * What the alert tick reads about each production page, kept as page_scores is written (issue 31, item 5), so a tick
 * reads one row per page instead of seeking a page's hours:
 * - `alert_page_week_hours`: per page and hour of the week (hours since the epoch mod 168), that hour's newest 9
 *   rows, newest first: the latest hour and the 8 weeks the anomaly baseline looks back;
 * - `alert_page_marks`: the page's first hour, its latest hour (score, sessions), the hour before the latest, and the
 *   anomaly baseline's weekly samples (the latest hour's hour of the week, 1 to 8 weeks before it, oldest first).
 * Kept by statement-level triggers on page_scores (insert, update), which merge the statement's rows set-based, whoever
 * writes them (the batch's upsert, the tick, a restore), in the writer's transaction. Each merge takes the stored row
 * (ON CONFLICT DO UPDATE locks it) and keeps what is newest. Exact with one writer of a page at a time (a site's
 * partition has one owner); the weekly samples are re-read from alert_page_week_hours at each write of the page.
 * page_scores rows are never deleted one by one (a site's history stays with it); a TRUNCATE empties the rollups too.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table alert_page_marks (
    site_id uuid not null,
    page text not null,
    first_start timestamptz not null,
    latest_start timestamptz not null,
    latest_score real not null,
    latest_sessions integer not null,
    previous_start timestamptz,
    previous_score real,
    week_scores real[] not null default '{}',
    week_sessions integer[] not null default '{}',
    primary key (site_id, page)
  )`.execute(db);
  await sql`create index alert_page_marks_latest_idx on alert_page_marks (site_id, latest_start)`.execute(db);
  await sql`create table alert_page_week_hours (
    site_id uuid not null,
    page text not null,
    hour_of_week smallint not null,
    starts timestamptz[] not null,
    scores real[] not null,
    sessions integer[] not null,
    primary key (site_id, page, hour_of_week)
  )`.execute(db);

  // A page's anomaly samples relative to its latest hour: the same hour of the week 1 to 8 weeks before, oldest first.
  await sql`create function alert_week_samples(p_site uuid, p_page text, p_latest timestamptz,
                                               out scores real[], out sessions integer[])
    language sql stable as $fn$
      select coalesce(array_agg(x.score order by x.start), '{}'), coalesce(array_agg(x.sessions order by x.start), '{}')
      from alert_page_week_hours w cross join unnest(w.starts, w.scores, w.sessions) as x(start, score, sessions)
      where w.site_id = p_site and w.page = p_page
        and w.hour_of_week = (floor(extract(epoch from p_latest) / 3600)::bigint % 168)::smallint
        and x.start < p_latest and x.start >= p_latest - interval '56 days'
        and extract(epoch from p_latest - x.start)::bigint % 604800 = 0
    $fn$`.execute(db);

  await createRollupsMerge(db);
  // One trigger per event: a trigger with transition tables takes one event.
  await sql`create trigger page_scores_alert_rollups_insert after insert on page_scores
    referencing new table as new_rows for each statement execute function alert_page_rollups()`.execute(db);
  await sql`create trigger page_scores_alert_rollups_update after update on page_scores
    referencing new table as new_rows for each statement execute function alert_page_rollups()`.execute(db);
  // page_scores emptied at once (a bench's reset, a restore): the rollups with it.
  await sql`create function alert_page_rollups_truncate() returns trigger language plpgsql as $fn$
begin
  truncate alert_page_marks, alert_page_week_hours;
  return null;
end
$fn$`.execute(db);
  await sql`create trigger page_scores_alert_rollups_truncate after truncate on page_scores
    for each statement execute function alert_page_rollups_truncate()`.execute(db);

  // What is already stored, once: every production row of page_scores is read (minutes on a big history), longer
  // than the pool's per-statement timeout; lifted for this migration's transaction only.
  await sql`select set_config('statement_timeout', '0', true)`.execute(db);
  await sql`insert into alert_page_week_hours (site_id, page, hour_of_week, starts, scores, sessions)
    select site_id, page, how, array_agg(window_start order by window_start desc),
           array_agg(score order by window_start desc), array_agg(sessions order by window_start desc)
    from (select site_id, page, window_start, score, sessions,
                 (floor(extract(epoch from window_start) / 3600)::bigint % 168)::smallint as how,
                 row_number() over (partition by site_id, page,
                                    (floor(extract(epoch from window_start) / 3600)::bigint % 168)
                                    order by window_start desc) as rn
          from page_scores where environment = 'production') s
    where rn <= 9 group by site_id, page, how`.execute(db);
  await sql`insert into alert_page_marks (site_id, page, first_start, latest_start, latest_score, latest_sessions,
                                          previous_start, previous_score)
    select site_id, page, min(window_start),
           max(window_start), (array_agg(score order by window_start desc))[1], (array_agg(sessions order by window_start desc))[1],
           (array_agg(window_start order by window_start desc))[2], (array_agg(score order by window_start desc))[2]
    from page_scores where environment = 'production' group by site_id, page`.execute(db);
  await sql`update alert_page_marks m set (week_scores, week_sessions) = (
    select ws.scores, ws.sessions from alert_week_samples(m.site_id, m.page, m.latest_start) ws)`.execute(db);
}

/**
 * The merge as this migration made it (0300 replaced it with one linear in the statement's rows; its down restores
 * this one).
 */
export async function createRollupsMerge(db: Kysely<any>): Promise<void> {
  // The merge, for the rows a statement wrote (transition table new_rows). Marks: the statement's two newest hours
  // and its first per page, merged with the stored ones (an hour written again takes its new score). Week hours: the
  // statement's rows per (page, hour of week), merged with the stored array, newest 9 kept.
  await sql`create or replace function alert_page_rollups() returns trigger language plpgsql as $fn$
begin
  insert into alert_page_week_hours as w (site_id, page, hour_of_week, starts, scores, sessions)
  select site_id, page, how, (array_agg(window_start order by window_start desc))[1:9],
         (array_agg(score order by window_start desc))[1:9], (array_agg(sessions order by window_start desc))[1:9]
  from (select site_id, page, window_start, score, sessions,
               (floor(extract(epoch from window_start) / 3600)::bigint % 168)::smallint as how
        from new_rows where environment = 'production') n
  group by site_id, page, how
  on conflict (site_id, page, hour_of_week) do update set
    (starts, scores, sessions) = (
      select (array_agg(k.s order by k.s desc))[1:9], (array_agg(k.score order by k.s desc))[1:9],
             (array_agg(k.sessions order by k.s desc))[1:9]
      from (select distinct on (c.s) c.s, c.score, c.sessions
            from (select x.s, x.score, x.sessions, 1 as fresh
                  from unnest(excluded.starts, excluded.scores, excluded.sessions) as x(s, score, sessions)
                  union all
                  select x.s, x.score, x.sessions, 0
                  from unnest(w.starts, w.scores, w.sessions) as x(s, score, sessions)) c
            order by c.s, c.fresh desc) k);
  insert into alert_page_marks as m (site_id, page, first_start, latest_start, latest_score, latest_sessions,
                                     previous_start, previous_score, week_scores, week_sessions)
  select n1.site_id, n1.page, f.first_start, n1.window_start, n1.score, n1.sessions, n2.window_start, n2.score,
         coalesce(ws.scores, '{}'), coalesce(ws.sessions, '{}')
  from (select site_id, page, window_start, score, sessions,
               row_number() over (partition by site_id, page order by window_start desc) as rn
        from new_rows where environment = 'production') n1
  join (select site_id, page, min(window_start) as first_start from new_rows where environment = 'production'
        group by site_id, page) f on f.site_id = n1.site_id and f.page = n1.page
  left join (select site_id, page, window_start, score,
                    row_number() over (partition by site_id, page order by window_start desc) as rn
             from new_rows where environment = 'production') n2
    on n2.site_id = n1.site_id and n2.page = n1.page and n2.rn = 2
  -- A page seen before gets its samples in DO UPDATE below, against its merged latest hour.
  left join lateral (select x.scores, x.sessions from alert_week_samples(n1.site_id, n1.page, n1.window_start) x
                     where not exists (select from alert_page_marks o where o.site_id = n1.site_id and o.page = n1.page)
                    ) ws on true
  where n1.rn = 1
  on conflict (site_id, page) do update set
    first_start = least(m.first_start, excluded.first_start),
    latest_start = greatest(m.latest_start, excluded.latest_start),
    latest_score = case when excluded.latest_start >= m.latest_start then excluded.latest_score
                        else m.latest_score end,
    latest_sessions = case when excluded.latest_start >= m.latest_start then excluded.latest_sessions
                           else m.latest_sessions end,
    (previous_start, previous_score) = (
      select c.s, c.score from (values (excluded.latest_start, excluded.latest_score, 1),
                                       (excluded.previous_start, excluded.previous_score, 1),
                                       (m.latest_start, m.latest_score, 0),
                                       (m.previous_start, m.previous_score, 0)) as c(s, score, fresh)
      where c.s < greatest(m.latest_start, excluded.latest_start)
      order by c.s desc, c.fresh desc limit 1),
    -- The samples are hours before the latest: a statement that only rewrote the latest hour (a batch's usual
    -- write) leaves them as they are.
    week_scores = case when excluded.latest_start = m.latest_start and excluded.first_start = m.latest_start
      then m.week_scores
      else (select x.scores from alert_week_samples(m.site_id, m.page, greatest(m.latest_start, excluded.latest_start)) x)
      end,
    week_sessions = case when excluded.latest_start = m.latest_start and excluded.first_start = m.latest_start
      then m.week_sessions
      else (select x.sessions from alert_week_samples(m.site_id, m.page, greatest(m.latest_start, excluded.latest_start)) x)
      end;

  return null;
end
$fn$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists page_scores_alert_rollups_insert on page_scores`.execute(db);
  await sql`drop trigger if exists page_scores_alert_rollups_update on page_scores`.execute(db);
  await sql`drop trigger if exists page_scores_alert_rollups_truncate on page_scores`.execute(db);
  await sql`drop function if exists alert_page_rollups()`.execute(db);
  await sql`drop function if exists alert_page_rollups_truncate()`.execute(db);
  await sql`drop function if exists alert_week_samples(uuid, text, timestamptz)`.execute(db);
  await sql`drop table if exists alert_page_week_hours`.execute(db);
  await sql`drop table if exists alert_page_marks`.execute(db);
}
