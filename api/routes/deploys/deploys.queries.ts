import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { enqueueOutbox } from '../../../shared/notify/outbox.ts';
import type { DeployRow } from '../../read-models/deploys.queries.ts';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Serialises deploy records of one site for the rest of the transaction, so two concurrent retries of the same
 * CI call cannot both miss the other and insert twice.
 */
export async function lockSiteDeploys(trx: Transaction<Database>, siteId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`deploys:${siteId}`}, 0))`.execute(trx);
}

/**
 * The latest deploy of the site recorded since `since` that a retry would repeat: the one recorded with this
 * Idempotency-Key, or the one of this version in this environment. Undefined when there is none.
 */
export async function findPriorDeploy(
  db: Db,
  siteId: string,
  since: Date,
  same: { idempotencyKey: string } | { environment: string; version: string },
): Promise<DeployRow | undefined> {
  const base = db.selectFrom('deploys').selectAll().where('site_id', '=', siteId).where('recorded_at', '>=', since);
  const matching =
    'idempotencyKey' in same
      ? base.where('idempotency_key', '=', same.idempotencyKey)
      : base.where('environment', '=', same.environment).where('version', '=', same.version);
  return matching.orderBy('recorded_at', 'desc').executeTakeFirst();
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
