import { seal } from '../../../shared/auth/secret-box.ts';
import { ConflictError } from '../../../shared/errors.ts';
import { newId } from '../../../shared/ids.ts';
import { MANAGE_READ_ACCESS, MANAGE_ADMIN_ACCESS } from '../../http/auth.ts';
import { idParam, type RouteTable } from '../../http/routes.ts';
import { audit } from '../../http/audit.ts';
import { DeletedSchema, OrgOrSiteQuerySchema } from '../../http/common.schema.ts';
import { listedSite } from '../../http/target-site.ts';
import type { ManageDeps } from '../../http/deps.ts';
import {
  deleteIntegration,
  findIntegrationForUpdate,
  insertIntegration,
  listIntegrations,
} from './integrations.queries.ts';
import { presentIntegration } from './integrations.presenter.ts';
import {
  IntegrationCreateSchema,
  IntegrationListSchema,
  IntegrationSchema,
  SECRET_FIELDS,
} from './integrations.schema.ts';

const NOT_FOUND = 'integration not found';

/** Integrations (slack, pagerduty, linear, github) per site: connect with a validated config, list, disconnect. */
export function integrationRoutes(table: RouteTable, deps: ManageDeps): RouteTable {
  const write = MANAGE_ADMIN_ACCESS;

  table.add({
    method: 'get',
    path: '/v1/manage/integrations',
    tag: 'integrations',
    summary: 'Connected integrations, by org_id or site_id (secrets never returned)',
    access: MANAGE_READ_ACCESS,
    query: OrgOrSiteQuerySchema,
    response: IntegrationListSchema,
    async handler(_ctx, { query, principal, guard }) {
      const siteId = listedSite(query, principal, guard);
      return { integrations: (await listIntegrations(deps.db, principal.orgId, siteId)).map(presentIntegration) };
    },
  });

  table.add({
    method: 'post',
    path: '/v1/manage/integrations',
    tag: 'integrations',
    status: 201,
    access: write,
    summary: 'Connect an integration to a site (one per provider and site)',
    description:
      'Config by provider — slack: {webhook_url, channel?} or {bot_token, channel}; pagerduty: {routing_key, severity?}; linear: {api_key, team_id}; github: {token, repository}. Credential fields are sealed and never returned. A second integration of the same provider on a site is 409.',
    body: IntegrationCreateSchema,
    siteBody: true,
    response: IntegrationSchema,
    async handler(_ctx, { body, principal }) {
      const secretNames = SECRET_FIELDS[body.provider].filter((f) => f in body.config);
      const config = Object.fromEntries(Object.entries(body.config).filter(([k]) => !secretNames.includes(k)));
      const secrets = Object.fromEntries(Object.entries(body.config).filter(([k]) => secretNames.includes(k)));
      const sealed = seal(await deps.instanceKeys.sealKey(), JSON.stringify(secrets));
      return deps.db.transaction().execute(async (trx) => {
        const row = await insertIntegration(trx, {
          id: newId(),
          orgId: principal.orgId,
          siteId: body.site_id,
          provider: body.provider,
          config,
          secretFields: secretNames,
          secretsSealed: sealed,
        });
        if (!row) throw new ConflictError(`this site already has a ${body.provider} integration; disconnect it first`);
        await audit(trx, principal, {
          orgId: row.org_id,
          siteId: row.site_id,
          action: 'integration.create',
          targetType: 'integration',
          targetId: row.id,
          summary: { provider: row.provider, config, secrets: secretNames },
        });
        return presentIntegration(row);
      });
    },
  });

  table.add({
    method: 'delete',
    path: '/v1/manage/integrations/:id',
    tag: 'integrations',
    access: write,
    summary: 'Disconnect an integration (its secrets are deleted)',
    params: idParam('id'),
    notFound: NOT_FOUND,
    response: DeletedSchema,
    async handler(_ctx, { params, principal, guard }) {
      await deps.db.transaction().execute(async (trx) => {
        const row = await findIntegrationForUpdate(trx, params.id);
        guard.site(row?.site_id, NOT_FOUND);
        await deleteIntegration(trx, params.id);
        await audit(trx, principal, {
          orgId: row!.org_id,
          siteId: row!.site_id,
          action: 'integration.delete',
          targetType: 'integration',
          targetId: params.id,
          summary: { provider: row!.provider },
        });
      });
      return { id: params.id, deleted: true as const };
    },
  });
  return table;
}
