/**
 * Test and bench support (issue 31, item 5): a site with many production pages, each with hourly scores over weeks,
 * and one enabled rule of every trigger with no page pattern, written by generate_series in a few statements.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { TRIGGER_TYPES, type TriggerType } from '../../processor/alerts/rules.ts';

const HOUR = 3600_000;
/** Hours of the week, and the anomaly baseline's weeks plus the latest hour (alert_page_week_hours keeps 9 a slot). */
const WEEK_HOURS = 168;
const KEPT_PER_SLOT = 9;

/** Thresholds no steady page reaches: the tick evaluates every pair and fires nothing. */
const QUIET_THRESHOLDS: Record<TriggerType, number> = {
  spike: 50,
  positive: 50,
  budget: 95,
  new_page: 95,
  trend: 50,
  anomaly: 40,
  co_occurrence: 1000,
};

/**
 * `pages` pages (`/scale-<n>`) of a site that has none yet, scored every hour for `hours` hours up to the hour of
 * `now`, at a steady score (20-30) with 10 sessions an hour; one rule per trigger (page_pattern unset). Returns the
 * rule ids.
 *
 * Written in one transaction without page_scores' rollup trigger (`session_replication_role = replica`, this
 * transaction only; into an empty page_scores also without its indexes, built after), the rollups (alert_page_marks,
 * alert_page_week_hours: migration 0270; page_current_scores: 0360) written from the same series instead: 10,000 pages × 8 weeks took 16 minutes
 * and more through the trigger's merge and the indexes, 5 minutes this way (load average 21-34). The rollups are the
 * rows the trigger would keep (alert-rollups.int.test.ts compares them).
 */
export async function seedAlertScale(
  db: Kysely<Database>,
  o: { siteId: string; pages: number; hours: number; now: number; thresholds?: Partial<Record<TriggerType, number>> },
): Promise<string[]> {
  const latest = new Date(Math.floor(o.now / HOUR) * HOUR);
  const score = sql`(20 + (p % 10))::real`;
  await db.transaction().execute(async (trx) => {
    await sql`set local session_replication_role = replica`.execute(trx);
    await sql`set local statement_timeout = 0`.execute(trx);
    // Seedings one at a time (two finding the table empty would both drop its indexes: a deadlock).
    await sql`lock table page_scores in access exclusive mode`.execute(trx);
    // Into an empty page_scores (a bench's new database) the rows go in without its indexes, built again after from
    // the finished table (a sort: 13.4 million rows inserted into two btrees took most of the seeding), all in this
    // transaction, which holds the table's lock until they exist again.
    const { rows: indexes } = await sql<{ drop: string; create: string }>`
      select case when c.conname is not null
               then format('alter table page_scores drop constraint %I', c.conname)
               else format('drop index %I', i.relname) end as drop,
             case when c.conname is not null
               then format('alter table page_scores add constraint %I %s', c.conname, pg_get_constraintdef(c.oid))
               else pg_get_indexdef(i.oid) end as create
      from pg_index x join pg_class i on i.oid = x.indexrelid
      left join pg_constraint c on c.conindid = x.indexrelid and c.conrelid = x.indrelid
      where x.indrelid = 'page_scores'::regclass and not exists (select from page_scores)`.execute(trx);
    for (const { drop } of indexes) await sql.raw(drop).execute(trx);
    // In slices of pages: one statement per slice keeps each insert's memory bounded; each page's hours oldest first,
    // so its rows append to the primary key's range.
    const slice = Math.max(1, Math.floor(1_000_000 / o.hours));
    for (let first = 0; first < o.pages; first += slice) {
      const last = Math.min(o.pages, first + slice) - 1;
      await sql`
        insert into page_scores (site_id, environment, page, window_start, score, friction, sessions, page_views,
                                 signal_count, dominant_signal, trend, updated_at)
        select ${o.siteId}, 'production', '/scale-' || p, ${latest}::timestamptz - h * interval '1 hour',
               ${score}, 0.2, 10, 12, 3, null, 'stable', now()
        from generate_series(${first}::int, ${last}::int) p, generate_series(${o.hours - 1}::int, 0, -1) h`.execute(
        trx,
      );
    }
    if (indexes.length > 0) {
      await sql`set local maintenance_work_mem = '256MB'`.execute(trx);
      for (const { create } of indexes) await sql.raw(create).execute(trx);
    }
    // Per page and hour of the week: its newest KEPT_PER_SLOT hours, newest first (h hours before the latest, h the
    // slot's newest, then a week apart).
    await sql`
      insert into alert_page_week_hours (site_id, page, hour_of_week, starts, scores, sessions)
      select ${o.siteId}, '/scale-' || p,
             ((floor(extract(epoch from ${latest}::timestamptz) / 3600)::bigint - h) % ${WEEK_HOURS}::int)::smallint,
             array(select ${latest}::timestamptz - (h + k * ${WEEK_HOURS}::int) * interval '1 hour'
                   from generate_series(0, ${KEPT_PER_SLOT - 1}::int) k where h + k * ${WEEK_HOURS}::int < ${o.hours}::int order by k),
             array_fill(${score}, array[least(${KEPT_PER_SLOT}::int, (${o.hours}::int - 1 - h) / ${WEEK_HOURS}::int + 1)]),
             array_fill(10, array[least(${KEPT_PER_SLOT}::int, (${o.hours}::int - 1 - h) / ${WEEK_HOURS}::int + 1)])
      from generate_series(0, ${o.pages - 1}::int) p, generate_series(0, ${Math.min(o.hours, WEEK_HOURS) - 1}::int) h`.execute(
      trx,
    );
    // Per page: first, latest and previous hours, and the anomaly samples (the latest hour's hour of the week, 1 to 8
    // weeks before it, oldest first).
    const weeks = Math.min(KEPT_PER_SLOT - 1, Math.floor((o.hours - 1) / WEEK_HOURS));
    await sql`
      insert into alert_page_marks (site_id, page, first_start, latest_start, latest_score, latest_sessions,
                                    previous_start, previous_score, week_scores, week_sessions)
      select ${o.siteId}, '/scale-' || p, ${latest}::timestamptz - ${o.hours - 1}::int * interval '1 hour', ${latest},
             ${score}, 10,
             case when ${o.hours}::int > 1 then ${latest}::timestamptz - interval '1 hour' end,
             case when ${o.hours}::int > 1 then ${score} end,
             case when ${weeks}::int > 0 then array_fill(${score}, array[${weeks}::int]) else '{}' end,
             case when ${weeks}::int > 0 then array_fill(10, array[${weeks}::int]) else '{}' end
      from generate_series(0, ${o.pages - 1}::int) p`.execute(trx);
    // Each page's current score (page_current_scores, migration 0360): its latest hour, the row the trigger keeps.
    await sql`
      insert into page_current_scores (site_id, environment, page, window_start, score, sessions, dominant_signal, trend, updated_at)
      select site_id, environment, page, window_start, score, sessions, dominant_signal, trend, updated_at
      from page_scores where site_id = ${o.siteId} and environment = 'production' and window_start = ${latest}`.execute(
      trx,
    );
  });
  const ids: string[] = [];
  for (const trigger of TRIGGER_TYPES) {
    const id = randomUUID();
    ids.push(id);
    await db
      .insertInto('alert_rules')
      .values({
        id,
        site_id: o.siteId,
        name: `scale ${trigger}`,
        trigger_type: trigger,
        threshold: o.thresholds?.[trigger] ?? QUIET_THRESHOLDS[trigger],
        cooldown_minutes: 60,
        channels: ['webhook'],
        page_pattern: null,
        slack_channel: null,
        enabled: true,
        last_fired_at: null,
      })
      .execute();
  }
  return ids;
}
