import { sql, type Expression, type ExpressionBuilder, type RawBuilder, type SqlBool } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import {
  asSessionFlag,
  cohortExpr,
  dayExpr,
  dwellMsExpr,
  sourceExpr,
  textMatch,
  type ExploreScope,
} from './explore.fields.ts';
import { matchingSessions, type Db, type MeasureRow } from './explore.queries.ts';
import { EXPLORE_MAX_GROUPS, type ExploreFilter, type GroupBy, type Metric } from './explore.schema.ts';

/**
 * Explorer measures from the session rollup (`explore_session_buckets`, migration 0220, kept by the processor in
 * processor/store/rollups.store.ts) instead of every session of the window: whole days of the window read its daily
 * rows, whole hours around them its hourly rows (or a day's rows minus its other hours': partialDay below), and the
 * two partial hours at the window's ends (the window starts and ends at `now`, not on an hour) read the raw sessions
 * through the same compiler as the raw path, so the answer is the raw answer. The rollup keeps what a
 * session's row says (source, cohort, converted, bounce, page views, dwell) and whether it met a weighted signal, so
 * it answers filters on source, converted (and `event_type is conversion`, the same flag) and confused, and groups by
 * day, source and cohort. A group by page reads
 * `explore_page_buckets` (migration 0282: the same sums per page a session had an event on, without its source), so
 * with converted and confused filters only. A filter on a page, signal or event type, or a group by signal, needs the
 * session's events or keys: that query takes the raw path.
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const ceilTo = (ms: number, unit: number) => Math.ceil(ms / unit) * unit;
const floorTo = (ms: number, unit: number) => Math.floor(ms / unit) * unit;

const ROLLUP_FIELDS = new Set<ExploreFilter['field']>(['source', 'converted', 'confused']);
const ROLLUP_GROUPS = new Set<GroupBy>(['day', 'source', 'cohort']);
// The page buckets (migration 0282) keep the session flags but not its source: a group by page with a source filter
// takes the raw path.
const PAGE_FIELDS = new Set<ExploreFilter['field']>(['converted', 'confused']);

/** Whether the rollup can answer this measure exactly. */
export function rollupAnswers(filters: readonly ExploreFilter[], groupBy: GroupBy | undefined): boolean {
  const fields = filters.map((f) => asSessionFlag(f).field);
  if (groupBy === 'page') return fields.every((f) => PAGE_FIELDS.has(f));
  return fields.every((f) => ROLLUP_FIELDS.has(f)) && (groupBy === undefined || ROLLUP_GROUPS.has(groupBy));
}

/** One filter over a rollup row (of either bucket table): the same meaning as filterPredicate over a session row. */
function rollupFilter(eb: ExpressionBuilder<any, any>, filter: ExploreFilter): Expression<SqlBool> {
  const f = asSessionFlag(filter);
  switch (f.field) {
    case 'converted':
    case 'confused': {
      const flag = f.field === 'converted' ? sql<SqlBool>`r.converted` : sql<SqlBool>`r.confused`;
      return (f.op === 'is') === f.value ? flag : eb.not(flag);
    }
    case 'source': {
      const source = sql<string>`r.source`;
      return f.op === 'is_not' ? eb.not(textMatch(source, 'is', f.value)) : textMatch(source, f.op, f.value);
    }
    default:
      throw new Error(`the session rollup cannot filter on ${f.field}`);
  }
}

const ROLLUP_KEY: Record<GroupBy | 'none', RawBuilder<string | null>> = {
  none: sql<null>`null::text`,
  day: sql<string>`to_char(r.bucket at time zone 'UTC', 'YYYY-MM-DD')`,
  source: sql<string>`r.source`,
  cohort: sql<string | null>`nullif(r.cohort, '')`,
  page: sql<string>`r.page`,
  signal: sql<null>`null::text`,
};
const RAW_KEY: Record<GroupBy | 'none', RawBuilder<string | null>> = {
  none: sql<null>`null::text`,
  day: dayExpr,
  source: sourceExpr(),
  cohort: cohortExpr,
  page: sql<string | null>`g.key`,
  signal: sql<null>`null::text`,
};

/**
 * The metric from the parts' sums, computed as the raw path's aggregate computes it: avg over integers is numeric
 * sum / numeric count (what PostgreSQL's avg(int) does), avg over dwell is float sum / float count (its avg(float8)),
 * so both paths give the same bits.
 */
const METRIC_FROM_SUMS: Record<Metric, RawBuilder<number | null>> = {
  count: sql<number>`coalesce(sum(p.sessions), 0)::float8`,
  avg_pageviews: sql<number | null>`(sum(p.page_views) / nullif(sum(p.sessions), 0))::float8`,
  conversion_rate: sql<number | null>`(coalesce(sum(p.converted), 0) / nullif(sum(p.sessions), 0))::float8`,
  avg_dwell_ms: sql<number | null>`(sum(p.dwell_ms) / nullif(sum(p.sessions), 0)::float8)::float8`,
  bounce_rate: sql<number | null>`(coalesce(sum(p.bounced), 0) / nullif(sum(p.sessions), 0))::float8`,
};

/**
 * How a window splits between the rollups and the raw sessions: whole days [firstDay, lastDay) and the whole hours
 * around them [firstHour, firstDay) and [lastDay, lastHour) from the rollup's daily and hourly rows, the partial hours
 * [from, firstHour) and [lastHour, to] from the raw sessions (epoch milliseconds).
 */
export function rollupWindow(scope: ExploreScope) {
  const firstHour = ceilTo(scope.from.getTime(), HOUR_MS);
  const lastHour = Math.max(firstHour, floorTo(scope.to.getTime(), HOUR_MS));
  const firstDay = Math.min(ceilTo(firstHour, DAY_MS), lastHour);
  const lastDay = Math.max(firstDay, floorTo(lastHour, DAY_MS));
  return { firstHour, lastHour, firstDay, lastDay };
}

/**
 * The metric over every matching session (`groupBy` undefined: one row, key null) or per group (at most
 * EXPLORE_MAX_GROUPS + 1 rows, ordered as the raw path orders them).
 */
export async function measureFromRollup(
  db: Db,
  scope: ExploreScope,
  filters: readonly ExploreFilter[],
  metric: Metric,
  groupBy: GroupBy | undefined,
): Promise<MeasureRow[]> {
  const { firstHour, lastHour, firstDay, lastDay } = rollupWindow(scope);
  const rollupKey = ROLLUP_KEY[groupBy ?? 'none'];
  const rawKey = RAW_KEY[groupBy ?? 'none'];
  const byPage = groupBy === 'page';
  // sign -1: a part subtracted (the other hours of a partial day read as its day row, see partialDay).
  const buckets = (grain: 'day' | 'hour', from: number, to: number, sign: 1 | -1 = 1) =>
    db
      // A group by page reads the page buckets (a session once on each of its pages), everything else the sessions'.
      // (Typed as the session buckets: both tables have every column named here outside raw SQL.)
      .selectFrom(
        (byPage ? 'explore_page_buckets as r' : 'explore_session_buckets as r') as 'explore_session_buckets as r',
      )
      .select([
        rollupKey.as('key'),
        sql<string>`${sql.lit(sign)} * sum(r.sessions)::bigint`.as('sessions'),
        sql<string>`${sql.lit(sign)} * sum(r.page_views)::bigint`.as('page_views'),
        sql<string>`${sql.lit(sign)} * (sum(r.sessions) filter (where r.converted))::bigint`.as('converted'),
        (byPage
          ? sql<string>`${sql.lit(sign)} * sum(r.bounced)::bigint`
          : sql<string>`${sql.lit(sign)} * (sum(r.sessions) filter (where r.bounced))::bigint`
        ).as('bounced'),
        sql<number>`${sql.lit(sign)} * sum(r.dwell_ms)::float8`.as('dwell_ms'),
      ])
      .where('r.site_id', '=', scope.siteId)
      .where('r.environment', '=', scope.environment)
      .where('r.grain', '=', grain)
      .where('r.bucket', '>=', new Date(from))
      .where('r.bucket', '<', new Date(to))
      .where((eb) => eb.and(filters.map((f) => rollupFilter(eb, f))))
      .groupBy(rollupKey);
  // Each partial hour is its own range on sessions_recent_first_idx (one OR of both would read the whole window).
  const edge = (bound: (eb: ExpressionBuilder<Database & { s: Database['sessions'] }, 's'>) => Expression<SqlBool>) =>
    matchingSessions(db, scope, filters)
      // The raw group by page: the session's page keys, joined as the raw path joins them (measureGroups).
      .$if(byPage, (q) =>
        q.leftJoin('explore_session_keys as g', (join) =>
          join.on('g.site_id', '=', scope.siteId).onRef('g.session_id', '=', 's.id').on('g.kind', '=', 'page'),
        ),
      )
      .where(bound)
      .select([
        rawKey.as('key'),
        sql<string>`count(*)::bigint`.as('sessions'),
        sql<string>`sum(s.page_views)::bigint`.as('page_views'),
        sql<string>`(count(*) filter (where s.conversions > 0))::bigint`.as('converted'),
        sql<string>`(count(*) filter (where s.page_views < 2))::bigint`.as('bounced'),
        sql<number>`sum(${dwellMsExpr})::float8`.as('dwell_ms'),
      ])
      .groupBy(rawKey);
  // NOTE: the five parts read a few thousand rows in all; the planner still gathers them in parallel workers, whose
  // start costs more than the work (at 10M events on the loaded bench machine: 37 ms with workers for under 3 ms of
  // scans). Scoped to the Explore transaction, like the list's enable_sort.
  await sql`set local max_parallel_workers_per_gather = 0`.execute(db);
  /**
   * The whole hours [from, to) of one partial day, which touches the day's `end` (the window's first day) or its
   * `start` (its last day): its hourly rows, or, when fewer hours lie on the day's other side, its daily rows minus the
   * hourly rows of those other hours (as insights reads them). The hourly rows of a day are one set per hour, scattered
   * by their updates (at 10M demo events the last partial day's 44k hourly rows filled 17k heap blocks, against 8k
   * daily rows): the dwell by page read 64k of them for 229k daily rows. Exact: the counts are integers, and the dwell
   * sums are sums of whole milliseconds (the ingest contract's `ts` is an integer), which float8 adds and subtracts
   * exactly below 2^53.
   */
  const partialDay = (from: number, to: number, touches: 'end' | 'start') => {
    const day = touches === 'end' ? to - DAY_MS : from;
    const inside = (to - from) / HOUR_MS;
    if (inside === 0 || day % DAY_MS !== 0 || inside <= 1 + (24 - inside)) return [buckets('hour', from, to)];
    const [otherFrom, otherTo] = touches === 'end' ? [day, from] : [to, day + DAY_MS];
    return [buckets('day', day, day + DAY_MS), buckets('hour', otherFrom, otherTo, -1)];
  };
  const parts = [...partialDay(firstHour, firstDay, 'end'), ...partialDay(lastDay, lastHour, 'start')]
    .reduce((all, part) => all.unionAll(part), buckets('day', firstDay, lastDay))
    .unionAll(edge((eb) => eb('s.started_at', '<', new Date(firstHour))))
    .unionAll(edge((eb) => eb('s.started_at', '>=', new Date(lastHour))))
    .as('p');
  const sessions = sql<number>`coalesce(sum(p.sessions), 0)::int`;
  const query = db.selectFrom(parts).select([METRIC_FROM_SUMS[metric].as('value'), sessions.as('sessions')]);
  if (groupBy === undefined) {
    const row = await query.executeTakeFirstOrThrow();
    return [{ key: null, value: row.value, sessions: row.sessions }];
  }
  return query
    .select(sql<string | null>`p.key`.as('key'))
    .groupBy(sql`p.key`)
    .having(sql<SqlBool>`sum(p.sessions) > 0`)
    .orderBy(
      groupBy === 'day' ? sql`p.key collate "C" asc` : sql`sum(p.sessions) desc, p.key collate "C" asc nulls last`,
    )
    .limit(EXPLORE_MAX_GROUPS + 1)
    .execute();
}
