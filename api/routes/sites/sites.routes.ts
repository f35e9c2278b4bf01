import { activeKeyHashesOfSite } from '../../../shared/db/queries/api-keys.queries.ts';
import { orgUsage, lockOrg } from '../../../shared/db/queries/usage.queries.ts';
import { NotFoundError } from '../../../shared/errors.ts';
import { limitsOf, monthStart, QuotaExceededError } from '../../../shared/tenancy/plans.ts';
import { provisionSite } from '../../../shared/tenancy/provision.ts';
import { DEFAULT_ENVIRONMENT } from '../../../shared/tenancy/sdk-config.ts';
import { ADMIN_ROLES, MANAGE_READ_ACCESS, MANAGE_ADMIN_ACCESS } from '../../http/auth.ts';
import type { RouteTable } from '../../http/routes.ts';
import { audit, diff } from '../../http/audit.ts';
import { DeletedSchema, OrgQuerySchema } from '../../http/common.schema.ts';
import { assertOutboundUrl } from '../../http/outbound-url.ts';
import type { ManageDeps } from '../../http/deps.ts';
import { deleteSite, findSite, findSiteForUpdate, listSites, updateSite, type SiteRecord } from './sites.queries.ts';
import {
  SiteCreatedSchema,
  SiteCreateSchema,
  SiteListSchema,
  SiteParamsSchema,
  SitePatchSchema,
  SiteSchema,
} from './sites.schema.ts';

const NOT_FOUND = 'site not found';
const present = (s: SiteRecord) => ({
  ...s,
  created_at: s.created_at.toISOString(),
  updated_at: s.updated_at.toISOString(),
});

/** `/v1/manage/site`: list, create (plan limit, keys returned once), update, delete. */
export function siteRoutes(table: RouteTable, deps: ManageDeps): RouteTable {
  table.add({
    method: 'get',
    path: '/v1/manage/site',
    tag: 'sites',
    summary: 'Sites of the organization',
    description: 'A site-scoped key sees its own site only.',
    access: MANAGE_READ_ACCESS,
    query: OrgQuerySchema,
    response: SiteListSchema,
    async handler(_ctx, { query, principal, guard }) {
      guard.org(query.org_id, 'organization not found');
      const only = principal.kind === 'key' ? [...principal.siteIds] : undefined;
      return { sites: (await listSites(deps.db, query.org_id, only)).map(present) };
    },
  });

  table.add({
    method: 'post',
    path: '/v1/manage/site',
    tag: 'sites',
    status: 201,
    summary: 'Create a site with its production environment, SDK config, publishable and secret keys',
    description:
      "User token of an owner or admin. Beyond the plan's site limit: 429 quota_exceeded. The keys are shown only in this response.",
    access: { surface: 'manage', scopes: [], roles: ADMIN_ROLES },
    body: SiteCreateSchema,
    response: SiteCreatedSchema,
    async handler(_ctx, { body, principal, guard }) {
      guard.org(body.org_id, 'organization not found');
      await assertOutboundUrl(body.url, deps.outbound);
      return deps.db.transaction().execute(async (trx) => {
        // NOTE: the org row lock serializes concurrent creations, so two requests cannot both take the last slot.
        if (!(await lockOrg(trx, body.org_id))) throw new NotFoundError('organization not found');
        const usage = await orgUsage(trx, body.org_id, monthStart(deps.now()));
        const limit = usage ? limitsOf(usage, deps.now()).sites : null;
        if (usage && limit !== null && usage.sites >= limit) {
          throw new QuotaExceededError(
            `the ${usage.plan} plan allows ${limit} site${limit === 1 ? '' : 's'}; delete one or change plan`,
            { limit, current: usage.sites, plan: usage.plan },
          );
        }
        const created = await provisionSite(trx, { orgId: body.org_id, name: body.name, url: body.url });
        const site = await findSite(trx, created.siteId);
        await audit(trx, principal, {
          orgId: body.org_id,
          siteId: created.siteId,
          action: 'site.create',
          targetType: 'site',
          targetId: created.siteId,
          summary: { name: body.name, url: body.url, environment: DEFAULT_ENVIRONMENT },
        });
        return {
          site: present(site!),
          environment: DEFAULT_ENVIRONMENT,
          publishable_key: created.publishableKey,
          secret_key: created.secretKey,
        };
      });
    },
  });

  table.add({
    method: 'patch',
    path: '/v1/manage/site/:site_id',
    tag: 'sites',
    summary:
      "Update a site's name, url or status (paused: ingest refuses its batches with 403 until it is active again)",
    access: MANAGE_ADMIN_ACCESS,
    params: SiteParamsSchema,
    notFound: NOT_FOUND,
    body: SitePatchSchema,
    response: SiteSchema,
    async handler(_ctx, { params, body, principal, guard }) {
      guard.site(params.site_id, NOT_FOUND);
      await assertOutboundUrl(body.url, deps.outbound);
      const { before, after } = await deps.db.transaction().execute(async (trx) => {
        const before = await findSiteForUpdate(trx, params.site_id);
        if (!before) throw new NotFoundError(NOT_FOUND);
        const after = await updateSite(trx, params.site_id, body, deps.now());
        await audit(trx, principal, {
          orgId: before.org_id,
          siteId: before.id,
          action: 'site.update',
          targetType: 'site',
          targetId: before.id,
          summary: { changes: diff(before, body) },
        });
        return { before, after };
      });
      // Key records carry their site's status (ingest refuses a paused site): every ingest re-reads them now.
      if (after.status !== before.status) await deps.forgetKeys(await activeKeyHashesOfSite(deps.db, after.id));
      return present(after);
    },
  });

  table.add({
    method: 'delete',
    path: '/v1/manage/site/:site_id',
    tag: 'sites',
    summary: 'Delete a site (its keys are revoked at once, its webhooks disabled)',
    access: { surface: 'manage', scopes: [], roles: ADMIN_ROLES },
    params: SiteParamsSchema,
    notFound: NOT_FOUND,
    response: DeletedSchema,
    async handler(_ctx, { params, principal, guard }) {
      guard.site(params.site_id, NOT_FOUND);
      const hashes = await deps.db.transaction().execute(async (trx) => {
        const site = await findSiteForUpdate(trx, params.site_id);
        if (!site) throw new NotFoundError(NOT_FOUND);
        const revoked = await deleteSite(trx, site.id, deps.now());
        await audit(trx, principal, {
          orgId: site.org_id,
          siteId: site.id,
          action: 'site.delete',
          targetType: 'site',
          targetId: site.id,
          summary: { name: site.name, keys_revoked: revoked.length },
        });
        return revoked;
      });
      await deps.forgetKeys(hashes);
      return { id: params.site_id, deleted: true as const };
    },
  });
  return table;
}
