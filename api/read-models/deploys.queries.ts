import { sql, type Kysely, type RawBuilder, type Selectable, type Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { DeployTable, DeployVerificationTable } from '../../shared/db/tables/deploys.table.ts';
import { isoMs } from '../../shared/db/sql.ts';
import { PREPARED } from '../../shared/db/prepared-reads.ts';
import { DEFAULT_SPIKE_THRESHOLD, type Environment } from '../../shared/domain/deploy-verification.ts';

type Db = Kysely<Database> | Transaction<Database>;
export type DeployRow = Selectable<DeployTable>;
export type VerificationRow = Selectable<DeployVerificationTable> & { deploy_version: string };

/** A time as the reads below send it: the ISO text `Date.toISOString` writes (isoMs), or the driver's Date. */
type Time = Date | string;

/** The columns of a deploy the presenter reads, as a stored row (Dates) or as the reads below send them (ISO text). */
export type DeployFields = Omit<
  DeployRow,
  'recorded_at' | 'frozen_at' | 'measured_until' | 'looks_done' | 'idempotency_key' | 'created_at'
> & {
  recorded_at: Time;
  frozen_at: Time | null;
};

/** The columns of a verification record the presenter reads (issueVerifications' rows, or the related records below). */
export type VerificationFields = Omit<VerificationRow, 'id' | 'site_id' | 'issue_id' | 'verified_at'> & {
  verified_at: Time;
};

/** Which deploys: a site's environment, a window of the list. */
export interface DeployFilter {
  site_id: string;
  environment: Environment;
  limit: number;
  offset: number;
}

export interface RelatedIssueRow {
  id: string;
  title: string;
  page: string;
  signal_type: string;
  severity: number;
  status: string;
}

/** For some deploys: the deciding verification record of each (deploy, issue), the issues they introduced, and the site's spike threshold. */
export interface RelatedData {
  records: (VerificationFields & { issue: RelatedIssueRow })[];
  introduced: (RelatedIssueRow & { introduced_by_deploy: string })[];
  spikeThreshold: number;
}

interface DeploysAnswer {
  rows: DeployFields[];
  related: RelatedData;
}

/**
 * The site's deploys that `where` selects, newest first (`limit` and `offset` as given), each with its related data,
 * as one JSON document: `{deploys, records, introduced, spike_threshold}`. One statement is one snapshot, so the
 * deploys and their related rows agree while the processor writes, without a transaction's two more round trips;
 * JSON.parse reads the document natively where the driver would parse every field of every row (times come as ISO
 * text: isoMs). The statement embeds it as a subquery too (the page view's head).
 */
export const deploysDocument = (
  siteId: string,
  where: RawBuilder<unknown>,
  limit: number | null,
  offset = 0,
) => sql<DeploysDocument>`(
  with d as materialized (
    select id, site_id, environment, version, commit_sha, url, description, confusion_before, confusion_after, delta,
           cohort, recorded_at, ${isoMs<null>(sql.ref<Date | null>('frozen_at'))} as frozen_at, created_by
    from deploys
    where site_id = ${siteId} and ${where}
    order by recorded_at desc, id
    limit ${limit} offset ${offset}
  )
  select json_build_object(
    'deploys', (select coalesce(json_agg(json_build_object(
        'id', id, 'site_id', site_id, 'environment', environment, 'version', version, 'commit_sha', commit_sha,
        'url', url, 'description', description, 'confusion_before', confusion_before, 'confusion_after', confusion_after,
        'delta', delta, 'cohort', cohort, 'recorded_at', ${isoMs(sql.ref<Date>('recorded_at'))}, 'frozen_at', frozen_at,
        'created_by', created_by) order by recorded_at desc, id), '[]') from d),
    -- The record that says how the issue relates to the deploy: a regression if one was found, else its latest fix
    -- test (an issue verified here keeps that relation while the tests since its fix find it stayed fixed), else the latest.
    'records', (select coalesce(json_agg(r order by r.deploy_id, r.issue_id), '[]') from (
        select distinct on (v.deploy_id, v.issue_id) v.deploy_id, v.issue_id, d.version as deploy_version, v.look, v.test,
               v.result, v.signal_count_before, v.signal_count_after, v.affected_before, v.affected_after,
               v.sessions_before, v.sessions_after, v.p_value, v.alpha, ${isoMs(sql.ref<Date>('v.verified_at'))} as verified_at,
               v.control,
               json_build_object('id', i.id, 'title', i.title, 'page', i.page, 'signal_type', i.signal_type,
                 'severity', i.severity::float8, 'status', i.status) as issue
        from deploy_verifications v
        join d on d.id = v.deploy_id
        join ux_issues i on i.id = v.issue_id
        where v.site_id = ${siteId}
        order by v.deploy_id, v.issue_id, (v.result = 'regressed') desc, (v.test = 'fix') desc, v.verified_at desc, v.id desc
      ) r),
    'introduced', (select coalesce(json_agg(i), '[]') from (
        select id, title, page, signal_type, severity, status, introduced_by_deploy
        from ux_issues
        where site_id = ${siteId} and introduced_by_deploy in (select id from d)
      ) i),
    'spike_threshold', (select min(threshold) from alert_rules
                        where site_id = ${siteId} and trigger_type = 'spike' and enabled))
)`;

export interface DeploysDocument {
  deploys: DeployFields[];
  records: RelatedData['records'];
  introduced: RelatedData['introduced'];
  spike_threshold: number | null;
}

/** The answer of deploysDocument: the deploys and their related data. */
export const fromDocument = (doc: DeploysDocument): DeploysAnswer => ({
  rows: doc.deploys,
  related: {
    records: doc.records,
    introduced: doc.introduced,
    spikeThreshold: doc.spike_threshold ?? DEFAULT_SPIKE_THRESHOLD,
  },
});

/** Deploys of a site and environment, newest first, with the total (one statement, so one snapshot). */
export async function listDeploys(db: Kysely<Database>, q: DeployFilter): Promise<DeploysAnswer & { total: number }> {
  const { rows } = await sql<{ doc: DeploysDocument; total: number }>`${PREPARED}
    select ${deploysDocument(q.site_id, sql`environment = ${q.environment}`, q.limit, q.offset)} as doc,
           (select count(*)::int from deploys where site_id = ${q.site_id} and environment = ${q.environment}) as total`.execute(
    db,
  );
  return { ...fromDocument(rows[0].doc), total: rows[0].total };
}

async function deploysWhere(db: Kysely<Database>, siteId: string, where: RawBuilder<unknown>, limit: number | null) {
  const { rows } = await sql<{
    doc: DeploysDocument;
  }>`${PREPARED}select ${deploysDocument(siteId, where, limit)} as doc`.execute(db);
  return fromDocument(rows[0].doc);
}

/** deploysDocument of the deploys of an environment recorded since `since`, at most `limit` (the page view's recent deploys). */
export const recentDeploysDocument = (siteId: string, environment: string, since: Date, limit: number) =>
  deploysDocument(siteId, sql`environment = ${environment} and recorded_at >= ${since}`, limit);

/** One deploy of the site with its related data, or undefined. */
export async function findDeploy(db: Kysely<Database>, siteId: string, id: string) {
  return firstWithRelated(await deploysWhere(db, siteId, sql`id = ${id}`, null));
}

/** The latest deploy of `version` in an environment of the site, with its related data, or undefined. */
export async function findDeployByVersion(db: Kysely<Database>, siteId: string, environment: string, version: string) {
  return firstWithRelated(
    await deploysWhere(db, siteId, sql`environment = ${environment} and version = ${version}`, 1),
  );
}

function firstWithRelated({ rows, related }: DeploysAnswer) {
  return rows[0] === undefined ? undefined : { row: rows[0], related };
}

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
