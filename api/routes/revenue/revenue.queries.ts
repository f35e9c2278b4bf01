import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { environmentWhere } from '../../../shared/db/environment.ts';
import { inScope } from '../../../shared/db/scope.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import { ACTIVE_STATUSES } from '../../../shared/domain/issue-status.ts';
import { SIGNAL_CATALOG } from '../../../shared/domain/signal-catalog.ts';
import { DEFAULT_SDK_CONFIG, RevenueConfigSchema, type SdkConfig } from '../../../shared/tenancy/sdk-config.ts';
import { mostSevereFirst } from '../../read-models/issues.queries.ts';
import { conversionMatcher, type ConversionGroups } from './conversion.ts';

const DAY_MS = 86_400_000;
/** Revenue at risk looks at the last 30 days (the events kept). */
export const REVENUE_WINDOW_DAYS = 30;
/** Signal types that weigh something: a session with one of them on a page was not calm there. */
export const WEIGHTED = SIGNAL_CATALOG.filter((d) => d.weight > 0).map((d) => d.type);

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
    ), viewers as (
      select distinct v.page, v.session_id from events v
      where v.site_id = ${siteId} and v.type = 'page_view' and v.ts >= ${since} and ${environmentWhere(environment, 'v.environment')} and v.page in (select page from issues)
    ), calm as (
      select w.page, w.session_id from viewers w
      -- The session's signal events (of this environment) on the page, through events' (site, session, ts) index: signals has
      -- no session index, so probing it read every signal of the page once per viewer.
      where not exists (select 1 from events g where g.site_id = ${siteId} and g.session_id = w.session_id and g.ts >= ${since}
                          and g.type = 'signal' and g.page = w.page and g.signal in (${sql.join(WEIGHTED)})
                          and ${environmentWhere(environment, 'g.environment')})
    ), met_counts as (
      select m.issue_id, count(*)::int as affected, count(c.session_id)::int as affected_converted
      from met m left join conv c using (session_id) group by m.issue_id
    ), calm_counts as (
      select k.page, count(*)::int as calm, count(c.session_id)::int as calm_converted
      from calm k left join conv c using (session_id) group by k.page
    )
    -- Counted once per issue and once per page, then joined: a count per issue correlated with the whole of met and
    -- calm rescanned them for every issue (over 120 s at 1M events with a few hundred issues).
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
 * Each active production issue with what ranking needs when revenue tracking is off: no conversion groups (zeros),
 * so the recommendations skip issueConversions' scans of 30 days of events and signals they would not use.
 */
export async function activeIssuesUnmeasured(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
): Promise<IssueConversionRow[]> {
  const rows = await db
    .selectFrom('ux_issues')
    .select([
      'id',
      'title',
      'page',
      'selector',
      'label',
      'signal_type',
      sql<number>`severity::float8`.as('severity'),
      'affected_sessions',
    ])
    .where(inScope({ site_id: siteId, environment }))
    .where('status', 'in', [...ACTIVE_STATUSES])
    .$call(mostSevereFirst)
    .execute();
  return rows.map((r) => ({ ...r, affected: 0, affected_converted: 0, calm: 0, calm_converted: 0 }));
}
