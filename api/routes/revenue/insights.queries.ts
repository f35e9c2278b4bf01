import { sql, type Expression, type ExpressionBuilder, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { environmentWhere } from '../../../shared/db/environment.ts';
import { filterPredicate, sourceExpr, type ExploreScope } from '../../read-models/explore.fields.ts';
import { matchingSessions, type Db } from '../../read-models/explore.queries.ts';
import { rollupWindow } from '../../read-models/explore.rollup.ts';
import { isConversion } from './revenue.queries.ts';

export interface GroupRow {
  key: string;
  confused: number;
  confused_converted: number;
  calm: number;
  calm_converted: number;
}

/** Most pages and sources listed, most sessions first. */
const MAX_GROUPS = 200;

type Dimension = 'page' | 'source' | 'none';
type S = ExpressionBuilder<Database & { s: Database['sessions'] }, 's'>;

const CONFUSED = { field: 'confused', op: 'is', value: true } as const;

/**
 * The sessions of the window (first event since `now` − days, as the Explorer's window: docs/explorer.md), split
 * into confused (a signal of a weighted type) and calm, with how many of each converted: by page (a session counts
 * once on every page it had an event on), by traffic source (`(direct)` when none was sent), and the window's
 * converting sessions.
 *
 * With the default conversion event (`conversion`), these are the Explorer's flags, so the rollups answer them as
 * they answer the Explorer's measures (`rollupWindow`): whole days and hours from `explore_page_buckets` (pages) and
 * `explore_session_buckets` (sources, total), the two partial hours at the window's ends from the raw sessions. The
 * read is one row per day, page and flag pair of the window, whatever the number of sessions. A custom conversion
 * event (`revenue_config.conversion_event`) is not in the rollups: the window's sessions are read raw, converted when
 * one of their events since the window's start is that custom event.
 */
export async function confusedVersusCalm(
  db: Kysely<Database>,
  scope: ExploreScope,
  conversionEvent: string,
): Promise<{ pages: GroupRow[]; sources: GroupRow[]; converting: number }> {
  const counts = (dimension: Dimension) =>
    // NOTE: a transaction of its own per read (the three still run side by side on the pool) with JIT and parallel
    // workers off (SET LOCAL: this connection only): the parts read at most a few hundred thousand narrow rows, where
    // compiling the plan or starting workers costs more than it saves (as for the Explorer's rollup path).
    db.transaction().execute(async (trx) => {
      await sql`set local jit = off`.execute(trx);
      await sql`set local max_parallel_workers_per_gather = 0`.execute(trx);
      return groupCounts(trx, scope, dimension, conversionEvent);
    });
  const [pages, sources, total] = await Promise.all([counts('page'), counts('source'), counts('none')]);
  return { pages, sources, converting: (total[0]?.confused_converted ?? 0) + (total[0]?.calm_converted ?? 0) };
}

/** The four counts per key of `dimension` (one row, key '', for 'none'), most sessions first. */
export async function groupCounts(
  db: Db,
  scope: ExploreScope,
  dimension: Dimension,
  conversionEvent: string,
): Promise<GroupRow[]> {
  const custom = conversionEvent !== 'conversion';
  const { firstHour, lastHour, firstDay, lastDay } = rollupWindow(scope);
  const parts = custom
    ? rawPart(db, scope, dimension, convertedBy(scope, conversionEvent), () => sql<SqlBool>`true`)
    : sql`${bucketPart(scope, dimension, 'day', firstDay, lastDay)}
      union all ${partialDay(scope, dimension, firstHour, firstDay, 'end')}
      union all ${partialDay(scope, dimension, lastDay, lastHour, 'start')}
      union all ${rawPart(db, scope, dimension, sql<SqlBool>`s.conversions > 0`, (eb) => eb('s.started_at', '<', new Date(firstHour)))}
      union all ${rawPart(db, scope, dimension, sql<SqlBool>`s.conversions > 0`, (eb) => eb('s.started_at', '>=', new Date(lastHour)))}`;
  const n = (where: RawBuilder<SqlBool>) => sql<number>`coalesce(sum(p.n) filter (where ${where}), 0)::int`;
  const { rows } = await sql<GroupRow>`
    select p.key,
      ${n(sql`p.confused`)} as confused,
      ${n(sql`p.confused and p.converted`)} as confused_converted,
      ${n(sql`not p.confused`)} as calm,
      ${n(sql`not p.confused and p.converted`)} as calm_converted
    from (${parts}) p
    group by p.key
    having sum(p.n) > 0
    order by sum(p.n) desc, p.key
    limit ${MAX_GROUPS}`.execute(db);
  return rows;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/**
 * The whole hours [from, to) of one partial day, which touches the day's `end` (the window's first day) or its
 * `start` (its last day): its hourly rows, or, when fewer hours lie on the day's other side, its daily row minus the
 * hourly rows of those other hours. Counts of sessions are integers, so the difference is exact; on the window's last
 * day the hours after `to` are the future (at most the current hour has rows), where its hourly rows are one set per
 * hour of the day so far (at 10M demo events 37k rows in 20k scattered pages for today, against 8k daily rows).
 */
function partialDay(scope: ExploreScope, dimension: Dimension, from: number, to: number, touches: 'end' | 'start') {
  const day = touches === 'end' ? to - DAY_MS : from;
  const inside = (to - from) / HOUR_MS;
  // The day row plus the other side's hours against the hours themselves; only on a whole UTC day.
  if (inside === 0 || day % DAY_MS !== 0 || inside <= 1 + (24 - inside)) {
    return bucketPart(scope, dimension, 'hour', from, to);
  }
  const [otherFrom, otherTo] = touches === 'end' ? [day, from] : [to, day + DAY_MS];
  return sql`${bucketPart(scope, dimension, 'day', day, day + DAY_MS)}
    union all ${bucketPart(scope, dimension, 'hour', otherFrom, otherTo, -1)}`;
}

/** A whole-bucket part: the rollup's sessions per key and flag pair over [from, to), times `sign`. */
function bucketPart(
  scope: ExploreScope,
  dimension: Dimension,
  grain: 'day' | 'hour',
  from: number,
  to: number,
  sign: 1 | -1 = 1,
) {
  const table = dimension === 'page' ? sql`explore_page_buckets` : sql`explore_session_buckets`;
  const key = dimension === 'page' ? sql`r.page` : dimension === 'source' ? sql`r.source` : sql`''`;
  return sql`
    select ${key} as key, r.confused, r.converted, ${sql.lit(sign)} * sum(r.sessions)::bigint as n from ${table} r
    where r.site_id = ${scope.siteId} and r.environment = ${scope.environment} and r.grain = ${grain}
      and r.bucket >= ${new Date(from)} and r.bucket < ${new Date(to)}
    group by 1, 2, 3`;
}

/** A raw part: the window's sessions within `bound`, with the session's confused flag as the Explorer's filter has it. */
function rawPart(
  db: Db,
  scope: ExploreScope,
  dimension: Dimension,
  converted: RawBuilder<SqlBool>,
  bound: (eb: S) => Expression<SqlBool>,
) {
  const key = dimension === 'page' ? sql<string>`g.key` : dimension === 'source' ? sourceExpr() : sql<string>`''`;
  return (
    matchingSessions(db, scope, [])
      // Each page the session had an event on: its page keys (explore_session_keys), as the page buckets sum them.
      .$if(dimension === 'page', (q) =>
        q.innerJoin('explore_session_keys as g', (join) =>
          join.on('g.site_id', '=', scope.siteId).onRef('g.session_id', '=', 's.id').on('g.kind', '=', 'page'),
        ),
      )
      .where(bound)
      .select((eb) => [
        key.as('key'),
        sql<boolean>`${filterPredicate(eb, scope, CONFUSED)}`.as('confused'),
        sql<boolean>`${converted}`.as('converted'),
        sql<string>`count(*)::bigint`.as('n'),
      ])
      .groupBy([sql`1`, sql`2`, sql`3`])
  );
}

/**
 * Converted by a custom conversion event: the session had one since the window's start (every event of a session of
 * the window is, as its first is), found through `insights_conversions_idx` (migration 0281) as one hashed set.
 */
function convertedBy(scope: ExploreScope, conversionEvent: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`s.id in (
    select session_id from events where site_id = ${scope.siteId} and ts >= ${scope.from}
      and ${environmentWhere(scope.environment)} and ${isConversion(conversionEvent)})`;
}
