import { sql, type Kysely, type Selectable, type SelectQueryBuilder, type Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { DeployTable, DeployVerificationTable } from '../../shared/db/tables/deploys.table.ts';
import { inOneSnapshot } from '../../shared/db/snapshot.ts';
import { DEFAULT_SPIKE_THRESHOLD, type Environment } from '../../shared/domain/deploy-verification.ts';

type Db = Kysely<Database> | Transaction<Database>;
export type DeployRow = Selectable<DeployTable>;
export type VerificationRow = Selectable<DeployVerificationTable> & { deploy_version: string };

/** Which deploys: a site's environment, a window of the list. */
export interface DeployFilter {
  site_id: string;
  environment: Environment;
  limit: number;
  offset: number;
}

/** Deploys of a site and environment, newest first, with the total (one snapshot). */
export async function listDeploys(db: Kysely<Database>, q: DeployFilter) {
  return inOneSnapshot(db, async (trx) => {
    const base = trx.selectFrom('deploys').where('site_id', '=', q.site_id).where('environment', '=', q.environment);
    const rows = await base
      .selectAll()
      .orderBy('recorded_at', 'desc')
      .orderBy('id')
      .limit(q.limit)
      .offset(q.offset)
      .execute();
    const total = await base.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
    return {
      rows,
      total: total.n,
      related: await relatedOf(
        trx,
        q.site_id,
        rows.map((r) => r.id),
      ),
    };
  });
}

type DeploySelect = SelectQueryBuilder<Database, 'deploys', object>;

/** The site's deploys that `narrow` selects, newest first, each with its related data (one snapshot). */
async function deploysWithRelated(db: Kysely<Database>, siteId: string, narrow: (q: DeploySelect) => DeploySelect) {
  return inOneSnapshot(db, async (trx) => {
    const rows = await narrow(trx.selectFrom('deploys').where('site_id', '=', siteId))
      .selectAll()
      .orderBy('recorded_at', 'desc')
      .orderBy('id')
      .execute();
    return {
      rows,
      related: await relatedOf(
        trx,
        siteId,
        rows.map((r) => r.id),
      ),
    };
  });
}

/** Deploys of a site and environment recorded since `since`, newest first, at most `limit` (the page view's recent deploys). */
export async function recentDeploys(
  db: Kysely<Database>,
  siteId: string,
  environment: string,
  since: Date,
  limit: number,
) {
  return deploysWithRelated(db, siteId, (q) =>
    q.where('environment', '=', environment).where('recorded_at', '>=', since).limit(limit),
  );
}

/** One deploy of the site with its related data, or undefined. */
export async function findDeploy(db: Kysely<Database>, siteId: string, id: string) {
  return firstWithRelated(await deploysWithRelated(db, siteId, (q) => q.where('id', '=', id)));
}

/** The latest deploy of `version` in an environment of the site, with its related data, or undefined. */
export async function findDeployByVersion(db: Kysely<Database>, siteId: string, environment: string, version: string) {
  return firstWithRelated(
    await deploysWithRelated(db, siteId, (q) =>
      q.where('environment', '=', environment).where('version', '=', version).limit(1),
    ),
  );
}

function firstWithRelated({ rows, related }: Awaited<ReturnType<typeof deploysWithRelated>>) {
  return rows[0] === undefined ? undefined : { row: rows[0], related };
}

export interface RelatedIssueRow {
  id: string;
  title: string;
  page: string;
  signal_type: string;
  severity: number;
  status: string;
}

/** For the given deploys: the deciding verification record of each (deploy, issue), the issues they introduced, and the site's spike threshold. */
async function relatedOf(db: Db, siteId: string, deployIds: readonly string[]) {
  const empty = {
    records: [] as (VerificationRow & { issue: RelatedIssueRow })[],
    introduced: [] as (RelatedIssueRow & { introduced_by_deploy: string })[],
    spikeThreshold: DEFAULT_SPIKE_THRESHOLD,
  };
  if (deployIds.length === 0) return empty;
  const { rows: records } = await sql<
    VerificationRow & {
      issue_title: string;
      issue_page: string;
      issue_signal_type: string;
      issue_severity: number;
      issue_status: string;
    }
  >`
    select distinct on (v.deploy_id, v.issue_id) v.*, d.version as deploy_version,
           i.title as issue_title, i.page as issue_page, i.signal_type as issue_signal_type, i.severity::float8 as issue_severity, i.status as issue_status
    from deploy_verifications v
    join deploys d on d.id = v.deploy_id
    join ux_issues i on i.id = v.issue_id
    where v.site_id = ${siteId} and v.deploy_id = any(${[...deployIds]}::uuid[])
    -- The record that says how the issue relates to the deploy: a regression if one was found, else its latest fix
    -- test (an issue verified here keeps that relation while the tests since its fix find it stayed fixed), else the latest.
    order by v.deploy_id, v.issue_id, (v.result = 'regressed') desc, (v.test = 'fix') desc, v.verified_at desc, v.id desc`.execute(
    db,
  );
  const introduced = await db
    .selectFrom('ux_issues')
    .select(['id', 'title', 'page', 'signal_type', 'severity', 'status', 'introduced_by_deploy'])
    .where('site_id', '=', siteId)
    .where('introduced_by_deploy', 'in', [...deployIds])
    .execute();
  const rule = await db
    .selectFrom('alert_rules')
    .select((eb) => eb.fn.min<number>('threshold').as('t'))
    .where('site_id', '=', siteId)
    .where('trigger_type', '=', 'spike')
    .where('enabled', '=', true)
    .executeTakeFirst();
  return {
    records: records.map((r) => ({
      ...r,
      issue: {
        id: r.issue_id,
        title: r.issue_title,
        page: r.issue_page,
        signal_type: r.issue_signal_type,
        severity: r.issue_severity,
        status: r.issue_status,
      },
    })),
    introduced: introduced.map((i) => ({ ...i, introduced_by_deploy: i.introduced_by_deploy! })),
    spikeThreshold: rule?.t ?? DEFAULT_SPIKE_THRESHOLD,
  };
}
export type RelatedData = Awaited<ReturnType<typeof relatedOf>>;

/** Verification records of one issue, oldest first (the issue detail's `verifications`). */
export async function issueVerifications(db: Db, issueId: string): Promise<VerificationRow[]> {
  return db
    .selectFrom('deploy_verifications as v')
    .innerJoin('deploys as d', 'd.id', 'v.deploy_id')
    .selectAll('v')
    .select('d.version as deploy_version')
    .where('v.issue_id', '=', issueId)
    .orderBy('v.verified_at')
    .orderBy('v.id')
    .execute();
}
