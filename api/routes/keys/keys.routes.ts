import { NotFoundError } from '../../../shared/errors.ts';
import { issueApiKey } from '../../../shared/tenancy/provision.ts';
import { ADMIN_ROLES } from '../../http/auth.ts';
import { idParam, type RouteTable } from '../../http/routes.ts';
import { enforceBound } from '../../../shared/tenancy/bounds.ts';
import { audit } from '../../http/audit.ts';
import type { ManageDeps } from '../../http/deps.ts';
import { findKey, listKeys, revokeKey } from './keys.queries.ts';
import { presentKey } from './keys.presenter.ts';
import { ApiKeyCreatedSchema, ApiKeyListSchema, ApiKeySchema, KeyCreateSchema } from './keys.schema.ts';

const NOT_FOUND = 'API key not found';

/**
 * API keys of a site. User tokens of owners and admins only: a key that could mint keys could outlive its
 * own revocation. The key itself is shown once, stored as a hash; revocation drops it from this process'
 * caches at once (the API never caches keys; ingest replicas elsewhere within KEY_CACHE_TTL_MS).
 */
export function keyRoutes(table: RouteTable, deps: ManageDeps): RouteTable {
  const access = { surface: 'manage', scopes: [], roles: ADMIN_ROLES } as const;

  table.read({
    path: '/v1/manage/keys',
    tag: 'keys',
    summary: 'API keys of a site (revoked ones included, never the keys themselves)',
    access,
    response: ApiKeyListSchema,
    async handler(_ctx, { query }) {
      return { site_id: query.site_id, keys: (await listKeys(deps.db, query.site_id)).map(presentKey) };
    },
  });

  table.add({
    method: 'post',
    path: '/v1/manage/keys',
    tag: 'keys',
    status: 201,
    access,
    summary: 'Create a secret, MCP or publishable key for a site; the key is in this answer only',
    description:
      'Scopes by type — secret: query:read, manage:write, webhook:write; mcp: mcp:read; publishable: ingest:write.',
    body: KeyCreateSchema,
    siteBody: true,
    response: ApiKeyCreatedSchema,
    async handler(_ctx, { body, principal }) {
      return deps.db.transaction().execute(async (trx) => {
        await enforceBound(trx, 'api_keys', body.site_id);
        const issued = await issueApiKey(trx, {
          orgId: principal.orgId,
          siteId: body.site_id,
          type: body.key_type,
          scopes: body.scopes,
          name: body.name,
        });
        const row = (await findKey(trx, issued.id))!;
        await audit(trx, principal, {
          orgId: principal.orgId,
          siteId: body.site_id,
          action: 'key.create',
          targetType: 'api_key',
          targetId: issued.id,
          summary: { key_type: body.key_type, scopes: body.scopes, key_prefix: issued.prefix, name: body.name ?? null },
        });
        return { ...presentKey(row), key: issued.key };
      });
    },
  });

  table.add({
    method: 'delete',
    path: '/v1/manage/keys/:id',
    tag: 'keys',
    access,
    summary: 'Revoke a key (effective at once)',
    params: idParam('id'),
    notFound: NOT_FOUND,
    response: ApiKeySchema,
    async handler(_ctx, { params, principal, guard }) {
      const hash = await deps.db.transaction().execute(async (trx) => {
        const key = await findKey(trx, params.id);
        guard.site(key?.site_id, NOT_FOUND);
        const h = await revokeKey(trx, params.id, deps.now());
        if (h)
          await audit(trx, principal, {
            orgId: key!.org_id,
            siteId: key!.site_id,
            action: 'key.revoke',
            targetType: 'api_key',
            targetId: key!.id,
            summary: { key_type: key!.key_type, key_prefix: key!.key_prefix },
          });
        return h;
      });
      if (hash) await deps.forgetKeys([hash]);
      const row = await findKey(deps.db, params.id);
      if (!row) throw new NotFoundError(NOT_FOUND);
      return presentKey(row);
    },
  });
  return table;
}
