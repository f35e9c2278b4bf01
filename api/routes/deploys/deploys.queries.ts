import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import type { DeployTable, DeployVerificationTable } from '../../../shared/db/tables/deploys.table.ts';
import { inOneSnapshot } from '../../../shared/db/snapshot.ts';
import { enqueueOutbox } from '../../../shared/notify/outbox.ts';
import { DEFAULT_SPIKE_THRESHOLD } from '../../../shared/domain/deploy-verification.ts';
import type { DeployListQuery } from './deploys.schema.ts';

type Db = Kysely<Database> | Transaction<Database>;
export type DeployRow = Selectable<DeployTable>;
export type VerificationRow = Selectable<DeployVerificationTable> & { deploy_version: string };

/**
 * Serialises deploy records of one site for the rest of the transaction, so two concurrent retries of the same
 * CI call cannot both miss the other and insert twice.
 */
export async function lockSiteDeploys(trx: Transaction<Database>, siteId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`deploys:${siteId}`}, 0))`.execute(trx);
}

/** The deploy recorded with this Idempotency-Key since `since`, if any. */
export async function findByIdempotencyKey(
  db: Db,
  siteId: string,
  key: string,
  since: Date,
): Promise<DeployRow | undefined> {
  return db
    .selectFrom('deploys')
    .selectAll()
    .where('site_id', '=', siteId)
    .where('idempotency_key', '=', key)
    .where('recorded_at', '>=', since)
    .orderBy('recorded_at', 'desc')
    .executeTakeFirst();
}

/** The latest deploy of this version in this environment since `since`, if any. */
export async function findSameVersion(
  db: Db,
  siteId: string,
  environment: string,
  version: string,
  since: Date,
): Promise<DeployRow | undefined> {
  return db
    .selectFrom('deploys')
    .selectAll()
    .where('site_id', '=', siteId)
    .where('environment', '=', environment)
    .where('version', '=', version)
    .where('recorded_at', '>=', since)
    .orderBy('recorded_at', 'desc')
    .executeTakeFirst();
}

export async function insertDeploy(
  trx: Transaction<Database>,
  d: Omit<
    DeployRow,
    'created_at' | 'confusion_after' | 'delta' | 'cohort' | 'measured_until' | 'frozen_at' | 'looks_done'
  >,
): Promise<DeployRow> {
  return trx.insertInto('deploys').values(d).returningAll().executeTakeFirstOrThrow();
}

/** Queues `deploy.recorded` in the write's transaction: the processor's relay publishes it after the commit. */
export async function enqueueDeployRecorded(
  trx: Transaction<Database>,
  deployId: string,
  payload: Record<string, unknown>,
): Promise<void> {
  await enqueueOutbox(trx, [{ kind: 'deploy.recorded', msgId: `deploy.recorded:${deployId}`, payload }]);
}

/** Deploys of a site and environment, newest first, with the total (one snapshot). */
export async function listDeploys(db: Kysely<Database>, q: DeployListQuery) {
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

/** Deploys of a site and environment recorded since `since`, newest first, at most `limit` (the page view's recent deploys). */
export async function recentDeploys(
  db: Kysely<Database>,
  siteId: string,
  environment: string,
  since: Date,
  limit: number,
) {
  return inOneSnapshot(db, async (trx) => {
    const rows = await trx
      .selectFrom('deploys')
      .selectAll()
      .where('site_id', '=', siteId)
      .where('environment', '=', environment)
      .where('recorded_at', '>=', since)
      .orderBy('recorded_at', 'desc')
      .orderBy('id')
      .limit(limit)
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

export async function findDeploy(db: Kysely<Database>, siteId: string, id: string) {
  return inOneSnapshot(db, async (trx) => {
    const row = await trx
      .selectFrom('deploys')
      .selectAll()
      .where('site_id', '=', siteId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) return undefined;
    return { row, related: await relatedOf(trx, siteId, [id]) };
  });
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

/** The latest deploy of `version` in an environment of the site, with its related data, or undefined. */
export async function findDeployByVersion(db: Kysely<Database>, siteId: string, environment: string, version: string) {
  return inOneSnapshot(db, async (trx) => {
    const row = await trx
      .selectFrom('deploys')
      .selectAll()
      .where('site_id', '=', siteId)
      .where('environment', '=', environment)
      .where('version', '=', version)
      .orderBy('recorded_at', 'desc')
      .orderBy('id')
      .executeTakeFirst();
    if (!row) return undefined;
    return { row, related: await relatedOf(trx, siteId, [row.id]) };
  });
}
