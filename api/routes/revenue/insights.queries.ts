import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { environmentWhere } from '../../../shared/db/environment.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import { isConversion, WEIGHTED } from './revenue.queries.ts';

export interface GroupRow {
  key: string;
  confused: number;
  confused_converted: number;
  calm: number;
  calm_converted: number;
}

/**
 * Sessions active since `since`, split into confused (at least one weighted signal in the session) and calm, with
 * how many of each converted: by page viewed (a session counts once on every page it viewed) and by traffic source
 * (`(direct)` when none was sent). Also the site's converting sessions over the period.
 */
export async function confusedVersusCalm(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  conversionEvent: string,
  since: Date,
) {
  const base = sql`
    with s as (
      select id, coalesce(nullif(source, ''), '(direct)') as source from sessions where site_id = ${siteId} and last_seen_at >= ${since} and ${environmentWhere(environment)}
    ), conv as (
      select distinct session_id from events where site_id = ${siteId} and ts >= ${since} and ${environmentWhere(environment)} and ${isConversion(conversionEvent)}
    ), confused as (
      select distinct session_id from signals where site_id = ${siteId} and environment = ${environment} and ts >= ${since} and signal_type in (${sql.join(WEIGHTED)})
    ), pv as (
      -- A session viewed the page since \`since\` exactly when its last view of it is since then: page_viewers (migration
      -- 0222, kept by the processor with the events) instead of every page view of the period in events.
      select v.page, v.session_id from page_viewers v join s on s.id = v.session_id
      where v.site_id = ${siteId} and v.environment = ${environment} and v.last_view_at >= ${since}
    )`;
  // NOTE: each grouping in a transaction of its own with JIT off (SET LOCAL: this statement's connection only, the pool's
  // other statements keep the server default): over 30 days at 10M events the plan's cost is far above jit_above_cost,
  // and compiling it took 11.1 s of the pages statement's 51.5 s on the loaded bench machine, for a join and an
  // aggregate whose per-row expressions are too simple to gain from it. The three statements still run side by side.
  const groups = (key: RawBuilder<unknown>, from: RawBuilder<unknown>, session: RawBuilder<unknown>) =>
    db.transaction().execute(async (trx) => {
      await sql`set local jit = off`.execute(trx);
      return sql<GroupRow>`
    ${base}
    select ${key} as key,
      (count(*) filter (where c.session_id is not null))::int as confused,
      (count(*) filter (where c.session_id is not null and v.session_id is not null))::int as confused_converted,
      (count(*) filter (where c.session_id is null))::int as calm,
      (count(*) filter (where c.session_id is null and v.session_id is not null))::int as calm_converted
    from ${from}
    left join confused c on c.session_id = ${session}
    left join conv v on v.session_id = ${session}
    group by 1
    order by count(*) desc, 1
    limit 200`.execute(trx);
    });
  const [pages, sources, converting] = await Promise.all([
    groups(sql`pv.page`, sql`pv`, sql`pv.session_id`),
    groups(sql`s.source`, sql`s`, sql`s.id`),
    sql<{
      n: number;
    }>`select count(distinct session_id)::int as n from events where site_id = ${siteId} and ts >= ${since} and ${environmentWhere(environment)} and ${isConversion(conversionEvent)}`.execute(
      db,
    ),
  ]);
  return { pages: pages.rows, sources: sources.rows, converting: converting.rows[0]?.n ?? 0 };
}
