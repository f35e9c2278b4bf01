import { sql, type Kysely } from 'kysely';

/**
 * Issue lists in their ranked order, read from an index instead of sorting every issue of the site (issue 25):
 * - `ux_issues_issue_list_idx`: the issues route's order (severity, affected sessions, signal count, id;
 *   api/read-models/issues.queries.ts) and, through an incremental sort of its first two columns, the recommendations'
 *   (api/routes/revenue/revenue.queries.ts): a page of 20 reads 20 rows instead of sorting 2,882 (10M demo events:
 *   13.9 ms → 0.2 ms for the issues list);
 * - `ux_issues_deploy_related_idx`: the issues a page of deploys introduced (api/read-models/deploys.queries.ts),
 *   which scanned every issue of the site (1.5 ms → 0.04 ms); only issues with a deploy are in it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index if not exists ux_issues_issue_list_idx
    on ux_issues (site_id, environment, severity desc, affected_sessions desc, signal_count desc, id)`.execute(db);
  await sql`create index if not exists ux_issues_deploy_related_idx on ux_issues (introduced_by_deploy)
    where introduced_by_deploy is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists ux_issues_issue_list_idx`.execute(db);
  await sql`drop index if exists ux_issues_deploy_related_idx`.execute(db);
}
