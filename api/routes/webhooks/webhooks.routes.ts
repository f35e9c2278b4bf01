import type { Transaction } from 'kysely';
import type { z } from 'zod';
import type { Database } from '../../../shared/db/database.ts';
import { seal } from '../../../shared/auth/secret-box.ts';
import { randomBytes } from 'node:crypto';
import { newId } from '../../../shared/ids.ts';
import { ADMIN_ROLES, ALL_ROLES, type Principal } from '../../http/auth.ts';
import { idParam, type RouteTable } from '../../http/routes.ts';
import { enforceBound } from '../../../shared/tenancy/bounds.ts';
import { audit, diff } from '../../http/audit.ts';
import type { ManageDeps } from '../../http/deps.ts';
import { assertOutboundUrl } from '../../http/outbound-url.ts';
import { OrgOrSiteQuerySchema } from '../../http/common.schema.ts';
import { listedSite } from '../../http/target-site.ts';
import { recoverDegradation } from '../../../shared/db/queries/degradation.queries.ts';
import {
  findWebhookForUpdate,
  insertWebhook,
  listWebhooks,
  updateWebhook,
  type WebhookRow,
} from './webhooks.queries.ts';
import {
  WEBHOOK_EVENTS,
  WebhookCreatedSchema,
  WebhookCreateSchema,
  WebhookEndpointSchema,
  WebhookListSchema,
  WebhookPatchSchema,
  WebhookTestSchema,
} from './webhooks.schema.ts';
import { insertDeliveries } from '../../../shared/db/queries/deliveries.queries.ts';
import { ConflictError } from '../../../shared/errors.ts';
import { eventBody, eventIdOf } from '../../../shared/notify/webhook-event.ts';

const NOT_FOUND = 'webhook endpoint not found';
/** Keys with either scope may manage webhooks: `webhook:write` exists for exactly this (spec "API key"). */
const SCOPES = ['manage:write', 'webhook:write'] as const;

export function presentWebhook(w: WebhookRow) {
  return {
    id: w.id,
    org_id: w.org_id,
    site_id: w.site_id,
    url: w.url,
    description: w.description,
    events: w.events,
    active: w.active,
    enabled: w.active,
    created_at: w.created_at.toISOString(),
    updated_at: w.updated_at.toISOString(),
    consecutive_failures: w.consecutive_failures,
    failing_since: w.failing_since?.toISOString() ?? null,
    disabled_at: w.disabled_at?.toISOString() ?? null,
    disabled_reason: w.disabled_reason,
  };
}

/** Owners, admins and keys with a webhook-managing scope. */
const WRITE = { surface: 'manage', scopes: SCOPES, roles: ADMIN_ROLES } as const;

/**
 * A write to one endpoint, its id in the path (PATCH, DELETE, the test event): `change` runs in one transaction on
 * the endpoint, locked, once the caller may reach it (else 404): a key only the endpoints bound to its own site, a
 * user every endpoint of their org.
 */
function addEndpointChange<B extends z.ZodType | undefined = undefined>(
  table: RouteTable,
  deps: ManageDeps,
  spec: {
    method: 'post' | 'patch' | 'delete';
    path: string;
    status?: number;
    summary: string;
    description?: string;
    body?: B;
    response: z.ZodType;
    change(
      trx: Transaction<Database>,
      w: WebhookRow,
      input: { body: B extends z.ZodType ? z.infer<B> : undefined; principal: Principal },
    ): Promise<unknown>;
  },
): RouteTable {
  const { change, ...route } = spec;
  return table.add({
    ...route,
    tag: 'webhooks',
    access: WRITE,
    params: idParam('endpoint_id'),
    notFound: NOT_FOUND,
    handler: (_ctx, { params, body, principal, guard }) =>
      deps.db.transaction().execute(async (trx) => {
        const w = await findWebhookForUpdate(trx, params.endpoint_id);
        if (principal.kind === 'key') guard.site(w?.site_id, NOT_FOUND);
        else guard.org(w?.org_id, NOT_FOUND);
        return change(trx, w!, { body: body as B extends z.ZodType ? z.infer<B> : undefined, principal });
      }),
  });
}

/** The audit entry of a change to endpoint `w`. */
const auditEndpoint = (
  trx: Transaction<Database>,
  principal: Principal,
  w: WebhookRow,
  action: string,
  summary: Record<string, unknown>,
) =>
  audit(trx, principal, {
    orgId: w.org_id,
    siteId: w.site_id,
    action,
    targetType: 'webhook_endpoint',
    targetId: w.id,
    summary,
  });

/** Webhook endpoints: the signing secret is returned once and stored sealed (the dispatcher signs with it). */
export function webhookRoutes(table: RouteTable, deps: ManageDeps): RouteTable {
  table.add({
    method: 'get',
    path: '/v1/manage/webhooks',
    tag: 'webhooks',
    summary: 'Webhook endpoints, by org_id or site_id',
    description:
      "By site_id: the site's endpoints and the org-wide ones (a key: only its site's). Signing secrets are never returned.",
    access: { surface: 'manage', scopes: SCOPES, roles: ALL_ROLES },
    query: OrgOrSiteQuerySchema,
    response: WebhookListSchema,
    async handler(_ctx, { query, principal, guard }) {
      const siteId = listedSite(query, principal, guard);
      return {
        endpoints: (await listWebhooks(deps.db, principal.orgId, { siteId, onlySite: principal.kind === 'key' })).map(
          presentWebhook,
        ),
      };
    },
  });

  table.add({
    method: 'post',
    path: '/v1/manage/webhooks',
    tag: 'webhooks',
    status: 201,
    access: WRITE,
    summary: 'Add a webhook endpoint; its signing secret is in this answer only',
    body: WebhookCreateSchema,
    response: WebhookCreatedSchema,
    async handler(_ctx, { body, principal, guard }) {
      const siteId = body.site_id ?? (principal.kind === 'key' ? principal.siteId : null) ?? null;
      guard.org(body.org_id, 'organization not found');
      if (siteId || principal.kind === 'key') guard.site(siteId, 'site not found');
      await assertOutboundUrl(body.url, deps.outbound);
      // Standard Webhooks form: whsec_ + base64 of 24 random bytes (its libraries decode the key from it).
      const secret = body.secret ?? `whsec_${randomBytes(24).toString('base64')}`;
      const sealed = seal(await deps.instanceKeys.sealKey(), secret);
      return deps.db.transaction().execute(async (trx) => {
        await enforceBound(trx, 'webhooks', body.org_id);
        const w = await insertWebhook(trx, {
          id: newId(),
          orgId: body.org_id,
          siteId,
          url: body.url,
          description: body.description ?? null,
          events: body.events ?? [...WEBHOOK_EVENTS],
          secretSealed: sealed,
        });
        await auditEndpoint(trx, principal, w, 'webhook.create', {
          url: w.url,
          site_id: w.site_id,
          events: w.events,
          description: w.description,
          own_secret: body.secret !== undefined,
        });
        return { endpoint: presentWebhook(w), signing_secret: secret };
      });
    },
  });

  addEndpointChange(table, deps, {
    method: 'patch',
    path: '/v1/manage/webhooks/:endpoint_id',
    summary: "Change an endpoint's url, events, description or active (alias enabled)",
    body: WebhookPatchSchema,
    response: WebhookEndpointSchema,
    async change(trx, before, { body, principal }) {
      await assertOutboundUrl(body.url, deps.outbound);
      const { enabled, ...rest } = body;
      const set = { ...rest, ...(enabled !== undefined ? { active: enabled } : {}) };
      // Re-enabling starts afresh: the failure streak and the dispatcher's reason for disabling are cleared.
      const reenable =
        set.active === true && !before.active
          ? { consecutive_failures: 0, failing_since: null, disabled_at: null, disabled_reason: null }
          : {};
      const after = await updateWebhook(trx, before.id, { ...set, ...reenable, updated_at: deps.now() });
      if (!before.active && after.active) await recoverDegradation(trx, 'endpoint_disabled', after.id, deps.now());
      await auditEndpoint(trx, principal, after, 'webhook.update', { changes: diff(before, set) });
      return presentWebhook(after);
    },
  });

  addEndpointChange(table, deps, {
    method: 'post',
    path: '/v1/manage/webhooks/:endpoint_id/test',
    status: 202,
    summary: 'Send a signed test event (type webhook.test) to the endpoint',
    description:
      'Queued for the dispatcher, signed and retried like any event; its attempts appear in /v1/query/webhook-deliveries. A disabled endpoint answers 409.',
    response: WebhookTestSchema,
    async change(trx, w, { principal }) {
      if (!w.active) throw new ConflictError('the endpoint is disabled; enable it (PATCH active: true) before testing');
      const now = deps.now();
      const event = {
        id: eventIdOf(`webhook.test:${newId()}`),
        type: 'webhook.test',
        timestamp: now.toISOString(),
        site_id: w.site_id,
        data: {
          message: 'A test event from Friction: your endpoint receives and verifies signed webhooks.',
          endpoint_id: w.id,
        },
      };
      const deliveryId = newId();
      await insertDeliveries(trx, [
        {
          id: deliveryId,
          event_id: event.id,
          event_type: event.type,
          org_id: w.org_id,
          site_id: w.site_id,
          channel: 'webhook',
          endpoint_id: w.id,
          target: w.url,
          body: eventBody(event),
          next_attempt_at: now,
        },
      ]);
      await auditEndpoint(trx, principal, w, 'webhook.test', { event_id: event.id, delivery_id: deliveryId });
      return { delivery_id: deliveryId, event_id: event.id, type: event.type };
    },
  });

  addEndpointChange(table, deps, {
    method: 'delete',
    path: '/v1/manage/webhooks/:endpoint_id',
    summary:
      'Delete an endpoint: it is disabled (spec: "the endpoint is disabled"), no longer listed, and no longer counts toward the org\'s 50 endpoints',
    response: WebhookEndpointSchema,
    async change(trx, w, { principal }) {
      // Marked deleted, not only inactive: an inactive endpoint still counts toward the bound (PATCH can re-enable
      // it), so a bound that counted deleted ones would never heal.
      const after = await updateWebhook(trx, w.id, {
        active: false,
        deleted_at: deps.now(),
        updated_at: deps.now(),
      });
      await auditEndpoint(trx, principal, w, 'webhook.delete', { url: w.url });
      return presentWebhook(after);
    },
  });
  return table;
}
