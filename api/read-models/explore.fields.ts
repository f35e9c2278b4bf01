import { sql, type Expression, type ExpressionBuilder, type RawBuilder, type SqlBool } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { Environment } from '../../shared/domain/deploy-verification.ts';
import { CONFUSING_SIGNALS, DIRECT_SOURCE } from '../../shared/domain/session-summary.ts';
import type { ExploreFilter, Metric, Op } from './explore.schema.ts';

/**
 * The fixed map from the Explore vocabulary to SQL (pure: builds expressions, runs nothing). Every field, metric
 * and group is one entry here; input only ever reaches the SQL as a bound parameter, never as text. The meanings
 * are written out in docs/explorer.md and executed by explore.reference.ts, which the property test holds this
 * map to.
 */

/** What the compiler knows of the request beyond the query: never taken from the query itself. */
export interface ExploreScope {
  siteId: string;
  environment: Environment;
  /** Sessions whose first event is in [from, to]. */
  from: Date;
  to: Date;
}

// Shared with the processor's session rollup, which must mean the same.
export { CONFUSING_SIGNALS, DIRECT_SOURCE } from '../../shared/domain/session-summary.ts';

type S = ExpressionBuilder<Database & { s: Database['sessions'] }, 's'>;

/**
 * `contains`: the value matched anywhere, literally. `\`, `%` and `_` are escaped with `\`, which the LIKE
 * below declares as its escape character, so `100%` matches only a literal "100%".
 */
export function likePattern(value: string): string {
  return `%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export function textMatch(
  expr: Expression<string | null>,
  op: Exclude<Op, 'is_not'>,
  value: string,
): RawBuilder<SqlBool> {
  return op === 'is' ? sql<SqlBool>`${expr} = ${value}` : sql<SqlBool>`${expr} like ${likePattern(value)} escape '\\'`;
}

/** The site and environment predicates, added by the compiler to every statement; a query cannot name them. */
export function scopePredicate(eb: S, scope: ExploreScope): Expression<SqlBool> {
  const env =
    scope.environment === 'staging'
      ? eb('s.environment', '=', 'staging')
      : // A session without an environment is production's (the SDK's default), as the processor folds it.
        eb.or([eb('s.environment', 'is', null), eb('s.environment', '<>', 'staging')]);
  return eb.and([
    eb('s.site_id', '=', scope.siteId),
    env,
    eb('s.started_at', '>=', scope.from),
    eb('s.started_at', '<=', scope.to),
  ]);
}

/** The session's source as filters and groups see it: the SDK's `context.source`, or `(direct)` when it sent none. */
export const sourceExpr = (ref: 's' | 'm' = 's') =>
  sql<string>`coalesce(nullif(${sql.ref(`${ref}.source`)}, ''), ${sql.lit(DIRECT_SOURCE)})`;

/**
 * Whether the session had an event on a page (kind 'page'), met a signal type (kind 'signal'), or had an event of a
 * type (kind 'type') matching `cond`: from the session's keys (`explore_session_keys`, migrations 0280 and 0310),
 * which hold exactly the distinct pages of its events, the types of its signal events and the types of its events:
 * one probe of its primary key (site, session, kind) per session instead of a read of its events.
 */
function hasKey(
  eb: S,
  scope: ExploreScope,
  kind: 'page' | 'signal' | 'type',
  cond: (key: RawBuilder<string>) => RawBuilder<SqlBool>,
): Expression<SqlBool> {
  return eb.exists(
    eb
      .selectFrom('explore_session_keys as k')
      .select(sql.lit(1).as('one'))
      .where('k.site_id', '=', scope.siteId)
      .whereRef('k.session_id', '=', 's.id')
      .where('k.kind', '=', kind)
      .where(() => cond(sql<string>`k.key`))
      // OFFSET 0 keeps this a per-session probe (a subplan): pulled up into a semi-join, a planner that believed
      // the window one row (tables not analyzed yet) scanned every key of the site once per session instead, the
      // session only a join filter (over 60 s for 3,000 sessions with a \`contains\` filter).
      // Not for the event types: a hash semi-join over explore_event_type_sessions_idx (migration 0310) reads only the
      // site's type keys, a handful per session, where a probe per session of the window was 9× slower.
      .$if(kind !== 'type', (qb) => qb.offset(0)),
  );
}

/**
 * `event_type is conversion` (or `is_not`) asks whether the session has a conversion event: exactly the converted
 * flag (`sessions.conversions` counts those events, and the type keys hold the same events' types), which the session
 * row and the rollups hold, where the type keys need a join over every session of the window (4.9 s p95 at 10M demo
 * events under 8 clients). Any other filter as it is.
 */
export function asSessionFlag(f: ExploreFilter): ExploreFilter {
  return f.field === 'event_type' && f.op !== 'contains' && f.value === 'conversion'
    ? { field: 'converted', op: f.op, value: true }
    : f;
}

/** One filter as a predicate over the session row `s`. */
export function filterPredicate(eb: S, scope: ExploreScope, filter: ExploreFilter): Expression<SqlBool> {
  const f = asSessionFlag(filter);
  switch (f.field) {
    case 'converted': {
      const converted = eb('s.conversions', '>', 0);
      return (f.op === 'is') === f.value ? converted : eb.not(converted);
    }
    case 'confused': {
      // A signal event of a confusing type: a signal key of one (the keys hold its signal events' types).
      const confused = hasKey(eb, scope, 'signal', (k) => sql<SqlBool>`${k} in (${sql.join(CONFUSING_SIGNALS)})`);
      return (f.op === 'is') === f.value ? confused : eb.not(confused);
    }
    case 'source':
      return f.op === 'is_not'
        ? eb.not(textMatch(sourceExpr(), 'is', f.value))
        : textMatch(sourceExpr(), f.op, f.value);
    case 'page':
    case 'signal': {
      const op = f.op === 'is_not' ? 'is' : f.op;
      const exists = hasKey(eb, scope, f.field, (k) => textMatch(k, op, f.value));
      // is_not: the session has no such event at all (never viewed the page, never met the signal).
      return f.op === 'is_not' ? eb.not(exists) : exists;
    }
    case 'event_type': {
      const op = f.op === 'is_not' ? 'is' : f.op;
      const exists = hasKey(eb, scope, 'type', (k) => textMatch(k, op, f.value));
      // is_not: the session has no event of that type at all.
      return f.op === 'is_not' ? eb.not(exists) : exists;
    }
  }
}

/** Session columns a measure reads, under the alias `m` of the matching-sessions subquery. */
export const METRIC_SQL: Record<
  Metric,
  { unit: 'sessions' | 'page_views' | 'ratio' | 'ms'; agg: RawBuilder<number | null> }
> = {
  count: { unit: 'sessions', agg: sql<number>`count(*)::float8` },
  avg_pageviews: { unit: 'page_views', agg: sql<number | null>`avg(m.page_views)::float8` },
  conversion_rate: {
    unit: 'ratio',
    agg: sql<number | null>`avg(case when m.conversions > 0 then 1 else 0 end)::float8`,
  },
  avg_dwell_ms: { unit: 'ms', agg: sql<number | null>`avg(m.dwell_ms)::float8` },
  bounce_rate: { unit: 'ratio', agg: sql<number | null>`avg(case when m.page_views < 2 then 1 else 0 end)::float8` },
};

/** A session's dwell: its last event's time minus its first's, in milliseconds. */
export const dwellMsExpr = sql<number>`(extract(epoch from (s.last_seen_at - s.started_at)) * 1000)::float8`;
/** The UTC day a session started. */
export const dayExpr = sql<string>`to_char(s.started_at at time zone 'UTC', 'YYYY-MM-DD')`;
/** A session's cohort: the app version it ran (`context.app_version`), null when the SDK sent none. */
export const cohortExpr = sql<string | null>`nullif(s.app_version, '')`;
