import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { environmentWhere } from '../../../shared/db/environment.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import { ACTIVE_STATUSES } from '../../../shared/domain/issue-status.ts';
import { DEFAULT_SDK_CONFIG, RevenueConfigSchema, type SdkConfig } from '../../../shared/tenancy/sdk-config.ts';
import { conversionMatcher, type ConversionGroups } from './conversion.ts';

const DAY_MS = 86_400_000;
/** Revenue at risk looks at the last 30 days (the events kept). */
export const REVENUE_WINDOW_DAYS = 30;

/** The environment's revenue settings (defaults when never set). */
export async function revenueConfig(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
): Promise<SdkConfig['revenue_config']> {
  const row = await db
    .selectFrom('environments as e')
    .innerJoin('sdk_configs as c', 'c.environment_id', 'e.id')
    .select('c.config')
    .where('e.site_id', '=', siteId)
    .where('e.name', '=', environment)
    .executeTakeFirst();
  const stored = (row?.config as { revenue_config?: unknown } | undefined)?.revenue_config;
  const parsed = RevenueConfigSchema.partial().safeParse(stored ?? {});
  return { ...DEFAULT_SDK_CONFIG.revenue_config, ...(parsed.success ? parsed.data : {}) };
}

/** SQL condition for "this event is a conversion" (revenue and insights). */
export function isConversion(conversionEvent: string): RawBuilder<boolean> {
  const m = conversionMatcher(conversionEvent);
  return m.name === null ? sql<boolean>`type = 'conversion'` : sql<boolean>`(type = 'custom' and name = ${m.name})`;
}

/** Converting sessions of the site and environment since `since`, and the average value a converting session brought (null: none had one). */
export async function conversionSummary(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  conversionEvent: string,
  since: Date,
): Promise<{ sessions: number; average_value: number | null }> {
  const { rows } = await sql<{ sessions: number; average_value: number | null }>`
    select count(*)::int as sessions, (avg(v) filter (where v > 0))::float8 as average_value
    from (select session_id, sum(coalesce(value, 0)) as v from events
          where site_id = ${siteId} and ts >= ${since} and ${environmentWhere(environment)} and ${isConversion(conversionEvent)}
          group by session_id) c`.execute(db);
  return rows[0] ?? { sessions: 0, average_value: null };
}

/**
 * The sessions that viewed one of `pages` since `since` with no weighted signal of their own on it since then (calm
 * there): one row per (page, session). From the rollups the processor keeps with the events: `page_viewers` (a session
 * viewed the page since then exactly when its last view of it is since then) and `page_weighted_signals` (likewise its
 * last weighted signal there, probed by its primary key `revenue_calm_probe_pkey`), instead of every page view of the
 * window in `events` and a probe of the viewer's events.
 */
export function calmViewers(
  siteId: string,
  environment: Environment,
  since: Date,
  pages: RawBuilder<unknown>,
): RawBuilder<{ page: string; session_id: string }> {
  // EXCEPT (a hashed set difference) rather than NOT EXISTS: the planner probed the primary key once per viewer (279k
  // probes, 9.5 s at 1M demo events, load average 27) where the pages' sessions with a recent weighted signal are few.
  // (page, session) is unique in each table, so the set difference drops no duplicate the raw answer would keep.
  return sql`
    select v.page, v.session_id from page_viewers v
    where v.site_id = ${siteId} and v.environment = ${environment} and v.last_view_at >= ${since} and v.page in (${pages})
    except
    select w.page, w.session_id from page_weighted_signals w
    where w.site_id = ${siteId} and w.environment = ${environment} and w.last_signal_at >= ${since} and w.page in (${pages})`;
}

export interface IssueConversionRow extends ConversionGroups {
  id: string;
  title: string;
  page: string;
  selector: string;
  label: string | null;
  signal_type: string;
  severity: number;
  affected_sessions: number;
}

/**
 * Each active issue with its conversion groups over the last REVENUE_WINDOW_DAYS: sessions that met the issue
 * (a signal of its type on its element and page) and how many of them converted; sessions that viewed its page
 * with no weighted signal there (calm) and how many of them converted.
 */
export async function issueConversions(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  conversionEvent: string,
  now: Date,
): Promise<IssueConversionRow[]> {
  const since = new Date(now.getTime() - REVENUE_WINDOW_DAYS * DAY_MS);
  const { rows } = await sql<IssueConversionRow>`
    with conv as (
      select distinct session_id from events where site_id = ${siteId} and ts >= ${since} and ${environmentWhere(environment)} and ${isConversion(conversionEvent)}
    ), issues as (
      select id, title, page, selector, label, signal_type, severity::float8 as severity, affected_sessions from ux_issues
      where site_id = ${siteId} and environment = ${environment} and status in (${sql.join([...ACTIVE_STATUSES])})
    ), met as (
      select distinct i.id as issue_id, g.session_id from issues i
      join signals g on g.site_id = ${siteId} and g.environment = ${environment} and g.page = i.page and g.signal_type = i.signal_type and g.selector = i.selector and g.ts >= ${since}
    ), calm as (
      ${calmViewers(siteId, environment, since, sql`select page from issues`)}
    ), met_counts as materialized (
      select m.issue_id, count(*)::int as affected, count(c.session_id)::int as affected_converted
      from met m left join conv c using (session_id) group by m.issue_id
    ), calm_counts as materialized (
      select k.page, count(*)::int as calm, count(c.session_id)::int as calm_converted
      from calm k left join conv c using (session_id) group by k.page
    )
    -- Counted once per issue and once per page, then joined: a count per issue correlated with the whole of met and
    -- calm rescanned them for every issue (over 120 s at 1M events with a few hundred issues). Materialized: inlined, the
    -- planner re-sorted met's grouped rows once per issue in a nested loop (7 s of 37 s at 1M, load average 27).
    select i.*,
      coalesce(mc.affected, 0) as affected, coalesce(mc.affected_converted, 0) as affected_converted,
      coalesce(cc.calm, 0) as calm, coalesce(cc.calm_converted, 0) as calm_converted
    from issues i
    left join met_counts mc on mc.issue_id = i.id
    left join calm_counts cc on cc.page = i.page
    order by i.severity desc, i.affected_sessions desc, i.id`.execute(db);
  return rows;
}

/**
 * The `limit` first active issues in the ranking tracking off gives (severity, then affected sessions, then id), with
 * what that ranking needs (no conversion groups: zeros), and how many active issues there are: so the recommendations
 * skip issueConversions' scans of 30 days of events and signals they would not use, and read a page of the ranked
 * issue index (ux_issues_issue_list_idx, migration 0320) instead of every active issue. One statement: the count and
 * the page come from the same snapshot.
 */
export async function activeIssuesUnmeasured(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  limit: number,
): Promise<{ issues: IssueConversionRow[]; total: number }> {
  const active = sql`site_id = ${siteId} and environment = ${environment} and status in (${sql.join([...ACTIVE_STATUSES])})`;
  // The page is joined to the count so that an empty page still answers the count. The order names the table's
  // columns (`ux_issues.severity`), not the float8 output of the same name, so the index gives it.
  const { rows } = await sql<Omit<IssueConversionRow, keyof ConversionGroups> & { total: number }>`
    select c.total, p.*
    from (select count(*)::int as total from ux_issues where ${active}) c
    left join lateral (
      select id, title, page, selector, label, signal_type, severity::float8 as severity, affected_sessions
      from ux_issues where ${active}
      order by ux_issues.severity desc, ux_issues.affected_sessions desc, ux_issues.id
      limit ${limit}
    ) p on true`.execute(db);
  return {
    issues: rows
      .filter((r) => r.id !== null)
      .map(({ total: _, ...r }) => ({ ...r, affected: 0, affected_converted: 0, calm: 0, calm_converted: 0 })),
    total: rows[0].total,
  };
}
