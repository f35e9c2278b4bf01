import { sql, type Kysely } from 'kysely';
import { createRollupsMerge } from './0270_alert_page_rollups.ts';

/**
 * page_scores' statement trigger (0270) merged a statement's rows into alert_page_marks at 10× the statement's own
 * cost (backend CPU per 200-page upsert of the latest hour: 109 ms with it, 10 ms without). Its plan joined the
 * transition table to itself three times, and the planner, which estimates a transition table at one row, made each
 * join a nested loop: quadratic in the statement's rows; and it called alert_week_samples for every row, the page's
 * marks row existing or not (the filter ran after the call). Now each page's first, latest and previous hours come
 * from one grouped pass, and the samples are read only for a page without a marks row. Same rows kept
 * (processor/alerts/alert-rollups.int.test.ts).
 */
export async function up(db: Kysely<any>): Promise<void> {
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
  select g.site_id, g.page, g.first_start, g.starts[1], g.scores[1], g.latest_sessions, g.starts[2], g.scores[2],
         -- A page seen before gets its samples in DO UPDATE below, against its merged latest hour.
         case when o.page is null
           then (select x.scores from alert_week_samples(g.site_id, g.page, g.starts[1]) x) else '{}' end,
         case when o.page is null
           then (select x.sessions from alert_week_samples(g.site_id, g.page, g.starts[1]) x) else '{}' end
  from (select site_id, page, min(window_start) as first_start,
               (array_agg(window_start order by window_start desc))[1:2] as starts,
               (array_agg(score order by window_start desc))[1:2] as scores,
               (array_agg(sessions order by window_start desc))[1] as latest_sessions
        from new_rows where environment = 'production' group by site_id, page) g
  left join alert_page_marks o on o.site_id = g.site_id and o.page = g.page
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
  await createRollupsMerge(db);
}
