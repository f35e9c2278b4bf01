/**
 * Test and bench support (issue 31, item 5): a site with many production pages, each with hourly scores over weeks,
 * and one enabled rule of every trigger with no page pattern, written by generate_series in a few statements.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { TRIGGER_TYPES, type TriggerType } from '../../processor/alerts/rules.ts';

const HOUR = 3600_000;

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
 * `pages` pages (`/scale-<n>`) scored every hour for `hours` hours up to the hour of `now`, at a steady score
 * (20-30) with 10 sessions an hour; one rule per trigger (page_pattern unset). Returns the rule ids.
 */
export async function seedAlertScale(
  db: Kysely<Database>,
  o: { siteId: string; pages: number; hours: number; now: number; thresholds?: Partial<Record<TriggerType, number>> },
): Promise<string[]> {
  const latest = new Date(Math.floor(o.now / HOUR) * HOUR);
  // In slices of pages: one statement per slice keeps each insert's memory bounded.
  const slice = Math.max(1, Math.floor(250_000 / o.hours));
  for (let first = 0; first < o.pages; first += slice) {
    const last = Math.min(o.pages, first + slice) - 1;
    await sql`
      insert into page_scores (site_id, environment, page, window_start, score, friction, sessions, page_views,
                               signal_count, dominant_signal, trend, updated_at)
      select ${o.siteId}, 'production', '/scale-' || p, ${latest}::timestamptz - h * interval '1 hour',
             20 + (p % 10), 0.2, 10, 12, 3, null, 'stable', now()
      from generate_series(${first}::int, ${last}::int) p, generate_series(0, ${o.hours - 1}::int) h`.execute(db);
  }
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
