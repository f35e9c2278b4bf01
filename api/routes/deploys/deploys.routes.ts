import { addShortFormWrite } from '../../http/target-site.ts';
import { listPage } from '../../http/present.ts';
import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import {
  DEFAULT_SPIKE_THRESHOLD,
  IDEMPOTENCY_WINDOW_MS,
  SAME_VERSION_WINDOW_MS,
  type Environment,
} from '../../../shared/domain/deploy-verification.ts';
import { overallScore } from '../../../shared/domain/score-summary.ts';
import { ConflictError, ValidationError } from '../../../shared/errors.ts';
import { newId } from '../../../shared/ids.ts';
import type { RouteTable } from '../../http/routes.ts';
import { audit } from '../../http/audit.ts';
import type { ManageDeps, ReadDeps } from '../../http/deps.ts';
import { listCurrentPageScores } from '../../read-models/scores.queries.ts';
import { enqueueDeployRecorded, findPriorDeploy, insertDeploy, lockSiteDeploys } from './deploys.queries.ts';
import { findDeploy, listDeploys, type DeployRow } from '../../read-models/deploys.queries.ts';
import { presentDeploy } from '../../read-models/deploys.presenter.ts';
import { DeploySchema } from '../../read-models/deploys.schema.ts';
import { DeployCreateSchema, DeployListSchema, DeployListQuerySchema, IdempotencyKeySchema } from './deploys.schema.ts';

const DEPLOY_NOT_FOUND = 'deploy not found';
const NO_RELATED = { records: [], introduced: [], spikeThreshold: DEFAULT_SPIKE_THRESHOLD };

/** The site's current overall score in an environment, from that environment's page scores (as /query/scores). */
async function currentScore(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  now: Date,
): Promise<number> {
  return overallScore(await listCurrentPageScores(db, siteId, environment, now));
}

/**
 * POST /v1/deploys (the spec's short form, used by CI) and /v1/manage/deploys: records a deploy with its
 * confusion_before and queues `deploy.recorded`, in one transaction. A retry is not a second deploy: the same
 * Idempotency-Key within 24 h, or the same (site, environment, version) within 10 minutes, answers the first record.
 */
export function deployRoutes(table: RouteTable, deps: ManageDeps): RouteTable {
  addShortFormWrite(table, {
    plural: 'deploys',
    summary: 'Record a deploy',
    shortSummary: 'Record a deploy (short form, for CI)',
    description:
      'Send after the new version serves traffic. Honours an Idempotency-Key header (24 h); the same version in the same environment within 10 minutes answers the first record. Answers 201 with the deploy (Idempotent-Replayed: true on a replay).',
    body: DeployCreateSchema,
    response: DeploySchema,
    async handler(ctx, { siteId, body, principal }) {
      const rawKey = ctx.get('idempotency-key');
      if (rawKey !== '' && !IdempotencyKeySchema.safeParse(rawKey).success) {
        throw new ValidationError(
          'invalid header: Idempotency-Key: must be 1-255 printable ASCII characters without spaces',
          [{ path: 'Idempotency-Key', message: 'must be 1-255 printable ASCII characters without spaces' }],
        );
      }
      const key = rawKey === '' ? null : rawKey;
      const now = deps.now();
      const { deploy, replayed } = await deps.db.transaction().execute(async (trx) => {
        await lockSiteDeploys(trx, siteId);
        if (key !== null) {
          const since = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS);
          const prior = await findPriorDeploy(trx, siteId, since, { idempotencyKey: key });
          if (prior) {
            if (prior.version !== body.version || prior.environment !== body.environment) {
              throw new ConflictError(
                `Idempotency-Key already used for deploy ${prior.id} (version ${prior.version}, ${prior.environment}) with a different body`,
              );
            }
            return { deploy: prior, replayed: true };
          }
        }
        const same = await findPriorDeploy(trx, siteId, new Date(now.getTime() - SAME_VERSION_WINDOW_MS), {
          environment: body.environment,
          version: body.version,
        });
        if (same) return { deploy: same, replayed: true };
        const d: DeployRow = await insertDeploy(trx, {
          id: newId(),
          site_id: siteId,
          environment: body.environment,
          version: body.version,
          commit_sha: body.commit_sha ?? null,
          url: body.url ?? null,
          description: body.description ?? null, // NOTE: read in the transaction: the embedded database has one connection, which the transaction holds.
          confusion_before: await currentScore(trx, siteId, body.environment, now),
          recorded_at: now,
          idempotency_key: key,
          created_by: principal.label,
        });
        await audit(trx, principal, {
          orgId: principal.orgId,
          siteId,
          action: 'deploy.record',
          targetType: 'deploy',
          targetId: d.id,
          summary: { version: d.version, environment: d.environment },
        });
        await enqueueDeployRecorded(trx, d.id, {
          event: 'deploy.recorded',
          occurred_at: now.toISOString(),
          deploy: {
            id: d.id,
            site_id: siteId,
            version: d.version,
            environment: d.environment,
            commit_sha: d.commit_sha,
            url: d.url,
            description: d.description,
            confusion_before: d.confusion_before,
            recorded_at: now.toISOString(),
          },
        });
        return { deploy: d, replayed: false };
      });
      if (replayed) {
        ctx.set('Idempotent-Replayed', 'true');
        const found = await findDeploy(deps.db, siteId, deploy.id);
        return presentDeploy(found?.row ?? deploy, found?.related ?? NO_RELATED);
      }
      return presentDeploy(deploy, NO_RELATED);
    },
  });
  return table;
}

/** `/v1/query/deploys`, `/v1/query/deploys/:deploy_id` and the short forms `/v1/deploys`, `/v1/deploys/:deploy_id`. */
export function deployReadRoutes(table: RouteTable, deps: ReadDeps): RouteTable {
  table.read({
    path: '/v1/query/deploys',
    shortForm: 'Deploys of a site (short form)',
    tag: 'deploys',
    summary:
      'Deploys of a site and environment, newest first, with before/after scores, related issues, cohort and verdict',
    query: DeployListQuerySchema,
    response: DeployListSchema,
    async handler(_ctx, { query: q }) {
      const found = await listDeploys(deps.db, q);
      return listPage('deploys', found, (r) => presentDeploy(r, found.related), q);
    },
  });
  return table.readOne({
    path: '/v1/query/deploys/:deploy_id',
    shortForm: 'One deploy (short form)',
    tag: 'deploys',
    summary: 'One deploy with its related issues (each with its verification record), cohort and verdict',
    notFound: DEPLOY_NOT_FOUND,
    response: DeploySchema,
    find: (query, id) => findDeploy(deps.db, query.site_id, id),
    present: (found) => presentDeploy(found.row, found.related),
  });
}
