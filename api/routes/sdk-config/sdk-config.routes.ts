import { ValidationError } from '../../../shared/errors.ts';
import { newId } from '../../../shared/ids.ts';
import {
  DEFAULT_SDK_CONFIG,
  mergeSdkConfig,
  readSdkConfig as readConfig,
  type SdkConfig,
} from '../../../shared/tenancy/sdk-config.ts';
import { MANAGE_READ_ACCESS, MANAGE_ADMIN_ACCESS } from '../../http/auth.ts';
import type { RouteTable } from '../../http/routes.ts';
import { audit, diff } from '../../http/audit.ts';
import type { ManageDeps } from '../../http/deps.ts';
import {
  ensureEnvironment,
  findEnvironmentConfigForUpdate,
  listEnvironmentConfigs,
  updateEnvironmentConfig,
} from './sdk-config.queries.ts';
import {
  SdkConfigListSchema,
  SdkConfigParamsSchema,
  SdkConfigPatchBodySchema,
  SdkConfigPatchQuerySchema,
  SdkConfigUpdatedSchema,
} from './sdk-config.schema.ts';
import { presentEnvironmentConfig, presentSdkConfigs } from './sdk-config.presenter.ts';

/** The SDK config of each site environment. */
export function sdkConfigRoutes(table: RouteTable, deps: ManageDeps): RouteTable {
  table.read({
    path: '/v1/manage/sdk-config',
    tag: 'sdk-config',
    summary: 'SDK config of every environment of a site',
    access: MANAGE_READ_ACCESS,
    response: SdkConfigListSchema,
    handler: async (_ctx, { query }) =>
      presentSdkConfigs(query.site_id, await listEnvironmentConfigs(deps.db, query.site_id)),
  });

  table.add({
    method: 'patch',
    path: '/v1/manage/sdk-config/:environment',
    tag: 'sdk-config',
    summary: "Change an environment's SDK config (creates the environment if new)",
    description:
      'Fields: sample_rate (0-1), ignore_selectors (≤100 selectors of ≤512 chars), segment.app_version, revenue_config {enabled, currency, conversion_event}. Each field sent replaces the stored one; revenue_config and segment merge field by field. The site is site_id in the query or body (a site-scoped key may omit it).',
    access: MANAGE_ADMIN_ACCESS,
    params: SdkConfigParamsSchema,
    notFound: 'environment not found',
    query: SdkConfigPatchQuerySchema,
    body: SdkConfigPatchBodySchema,
    response: SdkConfigUpdatedSchema,
    async handler(_ctx, { params, query, body, principal, guard }) {
      const { site_id: bodySite, ...patch } = body;
      if (query.site_id && bodySite && query.site_id !== bodySite)
        throw new ValidationError('site_id differs between query and body', [
          { path: 'site_id', message: "differs from the query's site_id" },
        ]);
      const siteId = query.site_id ?? bodySite ?? (principal.kind === 'key' ? principal.siteId : null);
      if (!siteId)
        throw new ValidationError('site_id is required', [{ path: 'site_id', message: 'is required (query or body)' }]);
      guard.site(siteId, 'site not found');
      const now = deps.now();
      const answer = await deps.db.transaction().execute(async (trx) => {
        let row = await findEnvironmentConfigForUpdate(trx, siteId, params.environment);
        if (!row) {
          // A new environment (the names are a fixed set, so their number is bounded): created once however many
          // requests race to create it.
          await ensureEnvironment(trx, { id: newId(), siteId, name: params.environment, config: DEFAULT_SDK_CONFIG });
          row = (await findEnvironmentConfigForUpdate(trx, siteId, params.environment))!;
        }
        const before = readConfig(row.config);
        const after: SdkConfig = mergeSdkConfig(before, patch);
        await updateEnvironmentConfig(trx, row.environment_id, after, now);
        await audit(trx, principal, {
          orgId: principal.orgId,
          siteId,
          action: 'sdk_config.update',
          targetType: 'environment',
          targetId: row.environment_id,
          summary: { environment: params.environment, changes: diff(before, patch) },
        });
        return { site_id: siteId, ...presentEnvironmentConfig(params.environment, after, now) };
      });
      // After the commit: an ingest replica that re-reads on this hint must find the new config.
      await deps.sdkConfigChanged(siteId);
      return answer;
    },
  });
  return table;
}
