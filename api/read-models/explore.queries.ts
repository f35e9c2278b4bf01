import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { UnavailableError } from '../../shared/errors.ts';
import {
  METRIC_SQL,
  cohortExpr,
  dayExpr,
  dwellMsExpr,
  filterPredicate,
  scopePredicate,
  sourceExpr,
  type ExploreScope,
} from './explore.fields.ts';
import { EXPLORE_MAX_GROUPS, type ExploreFilter, type ExploreMeasureOutput, type GroupBy } from './explore.schema.ts';

export type Db = Kysely<Database> | Transaction<Database>;

/** The sessions of the scope that pass every filter (AND). */
export function matchingSessions(db: Db, scope: ExploreScope, filters: readonly ExploreFilter[]) {
  return db
    .selectFrom('sessions as s')
    .where((eb) => eb.and([scopePredicate(eb, scope), ...filters.map((f) => filterPredicate(eb, scope, f))]));
}

export interface SessionRow {
  id: string;
  started_at: Date;
  last_seen_at: Date;
  device: string;
  source: string;
  app_version: string | null;
  page_views: number;
  conversions: number;
  revenue: number;
  dwell_ms: number;
}

/** List mode: up to `limit + 1` matching sessions (the extra one tells truncation), newest first. */
export async function listMatchingSessions(
  db: Db,
  scope: ExploreScope,
  filters: readonly ExploreFilter[],
  limit: number,
): Promise<SessionRow[]> {
  // NOTE: the planner cannot estimate how many sessions pass the event filters, and so preferred reading every session
  // of the window and sorting them; walking sessions_recent_first_idx in its order stops at the limit (at 100k events:
  // 581 sessions read instead of 20k, 330 ms instead of 720 ms on the loaded bench machine). Local to the Explore
  // transaction, and left off for its rest (the listed sessions' events are a hash aggregate, whose row order nothing
  // reads): one round trip fewer than setting it back.
  await sql`set local enable_sort = off`.execute(db);
  return matchingSessions(db, scope, filters)
    .select([
      's.id',
      's.started_at',
      's.last_seen_at',
      's.device',
      sourceExpr().as('source'),
      cohortExpr.as('app_version'),
      's.page_views',
      's.conversions',
      's.revenue',
      dwellMsExpr.as('dwell_ms'),
    ])
    .orderBy('s.started_at', 'desc')
    .orderBy(sql`s.id collate "C"`)
    .limit(limit + 1)
    .execute();
}

export interface SessionEventGroup {
  session_id: string;
  page: string;
  type: string;
  signal: string | null;
  /** The group's first event, epoch milliseconds (a number: parsing ~1,700 timestamps into Dates was the list's
   * largest cost in Node, about 5 ms a request at 10M events). */
  first_ms: number;
  n: number;
}

/** The listed sessions' events folded by (session, page, type, signal): their pages and signal counts come from it. */
export async function sessionEventGroups(
  db: Db,
  scope: ExploreScope,
  sessionIds: readonly string[],
): Promise<SessionEventGroup[]> {
  if (sessionIds.length === 0) return [];
  return db
    .selectFrom('events as e')
    .select([
      'e.session_id',
      'e.page',
      'e.type',
      'e.signal',
      // Whole milliseconds, rounded down as the driver's Date was (postgres-date truncates the microseconds).
      sql<number>`floor(extract(epoch from min(e.ts)) * 1000)::float8`.as('first_ms'),
      sql<number>`count(*)::int`.as('n'),
    ])
    .where('e.site_id', '=', scope.siteId)
    .where('e.session_id', '=', sql<string>`any(${[...sessionIds]}::text[])`)
    .where('e.ts', '>=', scope.from)
    .groupBy(['e.session_id', 'e.page', 'e.type', 'e.signal'])
    .execute();
}

export interface MeasureRow {
  key: string | null;
  value: number | null;
  sessions: number;
}

/** The matching sessions with the columns measures read, as the subquery `m`. */
function measured(db: Db, scope: ExploreScope, filters: readonly ExploreFilter[]) {
  return matchingSessions(db, scope, filters).select([
    's.id',
    's.page_views',
    's.conversions',
    dwellMsExpr.as('dwell_ms'),
    sourceExpr().as('source_key'),
    dayExpr.as('day_key'),
    cohortExpr.as('cohort_key'),
  ]);
}

/** The metric over every matching session, and how many there are. */
export async function measureTotal(
  db: Db,
  scope: ExploreScope,
  filters: readonly ExploreFilter[],
  output: ExploreMeasureOutput,
): Promise<MeasureRow> {
  const row = await db
    .selectFrom(measured(db, scope, filters).as('m'))
    .select([
      sql<null>`null`.as('key'),
      METRIC_SQL[output.metric].agg.as('value'),
      sql<number>`count(*)::int`.as('sessions'),
    ])
    .executeTakeFirstOrThrow();
  return row;
}

/**
 * The metric per group, at most EXPLORE_MAX_GROUPS + 1 rows (the extra one tells truncation). A session counts in
 * every page it had an event on and every signal type it met; sessions without a signal (or an app version) form
 * the null group.
 */
export async function measureGroups(
  db: Db,
  scope: ExploreScope,
  filters: readonly ExploreFilter[],
  metric: ExploreMeasureOutput['metric'],
  groupBy: GroupBy,
): Promise<MeasureRow[]> {
  const m = measured(db, scope, filters).as('m');
  const agg = [METRIC_SQL[metric].agg.as('value'), sql<number>`count(*)::int`.as('sessions')] as const;
  // Days read best in order; every other group most sessions first, ties by key (byte order, as everywhere).
  // (An output alias cannot be used inside an ORDER BY expression: the key's own expression is.)
  const order = (key: RawBuilder<string | null>) =>
    groupBy === 'day' ? sql`${key} collate "C" asc` : sql`count(*) desc, ${key} collate "C" asc nulls last`;
  if (groupBy === 'page' || groupBy === 'signal') {
    return (
      db
        .selectFrom(m)
        // The session's distinct pages or signal types from its keys (explore_session_keys, migration 0280): one join
        // over narrow rows instead of a probe of the session's events per session of the window.
        .leftJoin('explore_session_keys as g', (join) =>
          join.on('g.site_id', '=', scope.siteId).onRef('g.session_id', '=', 'm.id').on('g.kind', '=', groupBy),
        )
        .select([sql<string | null>`g.key`.as('key'), ...agg])
        .groupBy(sql`g.key`)
        .orderBy(order(sql`g.key`))
        .limit(EXPLORE_MAX_GROUPS + 1)
        .execute()
    );
  }
  const key =
    groupBy === 'source'
      ? sql<string>`m.source_key`
      : groupBy === 'day'
        ? sql<string>`m.day_key`
        : sql<string | null>`m.cohort_key`;
  return db
    .selectFrom(m)
    .select([key.as('key'), ...agg])
    .groupBy(key)
    .orderBy(order(key))
    .limit(EXPLORE_MAX_GROUPS + 1)
    .execute();
}

/** SQLSTATE 57014: statement_timeout (or a cancel) ended the statement. */
const isCancelled = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === '57014';

export function timeoutError(timeoutMs: number): UnavailableError {
  return new UnavailableError(
    `the Explore query ran longer than its ${timeoutMs} ms statement timeout and was stopped; narrow window_days or add filters, then retry`,
    5,
  );
}

/**
 * Runs `fn` in a read-only transaction bounded by `timeoutMs`, a 503 beyond it.
 * - PostgreSQL: `statement_timeout` set for this transaction only (`set_config(…, true)` is SET LOCAL): the server
 *   cancels the statement and the connection goes back to the pool at once. JIT is off in it (see below).
 * - Embedded PGlite: WebAssembly PostgreSQL has no timer to cancel a statement (statement_timeout is accepted and
 *   never fires), so the API stops waiting at the deadline and answers 503; the statement itself runs to its end in
 *   the database thread, which serves other statements only after it.
 */
export async function readOnlyWithTimeout<T>(
  db: Kysely<Database>,
  kind: 'postgres' | 'pglite',
  timeoutMs: number,
  fn: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  const run = db
    .transaction()
    .setAccessMode('read only')
    .execute(async (trx) => {
      if (kind === 'postgres') {
        // One round trip for both settings (each statement of the transaction is one).
        // NOTE: no JIT for the Explore transaction: at 10M events the plans of the page measures cost far above
        // jit_above_cost, and compiling them took 2.5 s of a 55 s dwell by page (11 s of insights' 51 s) on the loaded
        // bench machine, for expressions that run once per row of a hash join or aggregate and gain little.
        await sql`select set_config('statement_timeout', ${String(timeoutMs)}, true), set_config('jit', 'off', true)`.execute(
          trx,
        );
      }
      return fn(trx);
    });
  if (kind === 'postgres') {
    return run.catch((err: unknown) => {
      throw isCancelled(err) ? timeoutError(timeoutMs) : err;
    });
  }
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timeoutError(timeoutMs)), timeoutMs);
  });
  // The abandoned statement still settles later: its outcome is nobody's, so it must not surface as unhandled.
  run.catch(() => {});
  try {
    return await Promise.race([run, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
