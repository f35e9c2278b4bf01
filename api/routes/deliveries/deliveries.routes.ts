import { isoOrNull } from '../../http/present.ts';
import { z } from 'zod';
import type { Kysely } from 'kysely';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import type { Database } from '../../../shared/db/database.ts';
import { listDeliveryLog } from '../../../shared/db/queries/deliveries.queries.ts';
import { DEGRADATION_KINDS, listDegradation } from '../../../shared/db/queries/degradation.queries.ts';
import { ADMIN_ROLES, ALL_ROLES, READ_SCOPES } from '../../http/auth.ts';
import type { RouteTable } from '../../http/routes.ts';

export const DeliveryLogQuerySchema = z.object({
  org_id: Uuid(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export const DeliveryLogEntrySchema = z.object({
  id: z.string().describe('att_<n> for an attempt made, pen_<delivery> for the next attempt of a waiting delivery'),
  delivery_id: Uuid(),
  channel: z.enum(['webhook', 'slack', 'pagerduty', 'email']),
  endpoint_id: Uuid().nullable().describe('the webhook endpoint or integration'),
  target: z.string().describe('URL, or the email recipients; never a secret'),
  event_id: z.string().describe('stable across retries: the webhook-id header'),
  event_type: z.string(),
  site_id: Uuid().nullable(),
  attempt: z.number().int().min(1),
  status: z.enum(['pending', 'succeeded', 'failed']),
  http_status: z.number().int().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number().int().nullable(),
  at: z.iso.datetime().describe('when the attempt started (pending: when it was last scheduled)'),
  next_attempt_at: z.iso.datetime().nullable().describe('when the next attempt is due; null when none will follow'),
});
export const DeliveryLogSchema = z.object({ org_id: Uuid(), deliveries: z.array(DeliveryLogEntrySchema) });

export const DegradationQuerySchema = z.object({
  org_id: Uuid(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export const DegradationEventSchema = z.object({
  id: Uuid(),
  scope: z.enum(['org', 'instance']),
  kind: z.enum(DEGRADATION_KINDS),
  subject: z.string(),
  message: z.string(),
  active: z.boolean(),
  started_at: z.iso.datetime(),
  recovered_at: z.iso.datetime().nullable(),
  details: z.record(z.string(), z.unknown()),
});
export const DegradationListSchema = z.object({ org_id: Uuid(), events: z.array(DegradationEventSchema) });

/** Recovered events stay listed this long. */
const RECENT_DAYS = 7;

/** `GET /v1/query/webhook-deliveries` and `GET /v1/query/degradation`: org-scoped reads of the delivery side. */
export function deliveryRoutes(table: RouteTable, deps: { db: Kysely<Database>; now: () => Date }): RouteTable {
  table.add({
    method: 'get',
    path: '/v1/query/webhook-deliveries',
    tag: 'webhooks',
    summary:
      'Delivery log of the organization, newest first: every attempt (webhooks, Slack, PagerDuty, email) and each waiting next attempt',
    description: "Org-scoped; a site-scoped key sees its own site's deliveries. limit 1-500, default 100.",
    access: { surface: 'read', scopes: READ_SCOPES, roles: ADMIN_ROLES },
    query: DeliveryLogQuerySchema,
    response: DeliveryLogSchema,
    async handler(_ctx, { query, principal, guard }) {
      guard.org(query.org_id, 'organization not found');
      const rows = await listDeliveryLog(
        deps.db,
        query.org_id,
        query.limit,
        principal.kind === 'key' && principal.siteId ? principal.siteId : undefined,
      );
      return {
        org_id: query.org_id,
        deliveries: rows.map((r) => ({
          ...r,
          channel: r.channel as 'webhook',
          status: r.status as 'pending',
          at: r.at.toISOString(),
          next_attempt_at: isoOrNull(r.next_attempt_at),
        })),
      };
    },
  });
  table.add({
    method: 'get',
    path: '/v1/query/degradation',
    tag: 'webhooks',
    summary:
      "Degradation events: active ones first, then those recovered in the last 7 days; the org's and instance-wide ones",
    access: { surface: 'read', scopes: READ_SCOPES, roles: ALL_ROLES },
    query: DegradationQuerySchema,
    response: DegradationListSchema,
    async handler(_ctx, { query, guard }) {
      guard.org(query.org_id, 'organization not found');
      const rows = await listDegradation(
        deps.db,
        query.org_id,
        query.limit,
        new Date(deps.now().getTime() - RECENT_DAYS * 86_400_000),
      );
      return {
        org_id: query.org_id,
        events: rows.map((r) => ({
          id: r.id,
          scope: r.org_id ? ('org' as const) : ('instance' as const),
          kind: r.kind as 'over_quota',
          subject: r.subject,
          message: r.message,
          active: r.recovered_at === null,
          started_at: r.started_at.toISOString(),
          recovered_at: isoOrNull(r.recovered_at),
          details: r.details,
        })),
      };
    },
  });
  return table;
}
