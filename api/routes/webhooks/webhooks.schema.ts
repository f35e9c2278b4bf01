import { z } from 'zod';
import { HttpUrlSchema, NON_EMPTY, nonEmpty, Timestamp } from '../../http/common.schema.ts';
import { Uuid } from '../../../shared/contracts/uuid.ts';

/** Event kinds of the spec's Events table. */
export const WEBHOOK_EVENTS = [
  'issue.created',
  'issue.updated',
  'alert.triggered',
  'alert.acknowledged',
  'alert.resolved',
  'score.spike',
  'deploy.recorded',
] as const;

const Events = z
  .array(z.enum(WEBHOOK_EVENTS))
  .min(1)
  .max(WEBHOOK_EVENTS.length)
  .refine((e) => new Set(e).size === e.length, 'must not repeat an event kind');

export const WebhookCreateSchema = z.strictObject({
  org_id: Uuid(),
  url: HttpUrlSchema,
  /** Only this site's events; omitted: every site of the org (a site-scoped key always means its own site). */
  site_id: Uuid().optional(),
  description: z.string().max(160).optional(),
  /** Omitted: every kind. */
  events: Events.optional(),
  /** Your own signing secret (another reference shows it); omitted: a random one is generated. */
  secret: z.string().min(16).max(256).optional(),
});

/** `active` and `enabled` are the two references' names of one flag: either may be sent, both only when they agree. */
export const WebhookPatchSchema = z
  .strictObject({
    url: HttpUrlSchema.optional(),
    events: Events.optional(),
    description: z.string().max(160).nullable().optional(),
    active: z.boolean().optional(),
    enabled: z.boolean().optional(),
  })
  .refine((b) => b.active === undefined || b.enabled === undefined || b.active === b.enabled, {
    path: ['enabled'],
    error: 'differs from active; send one of them',
  })
  .refine(nonEmpty, NON_EMPTY);

export const WebhookEndpointSchema = z.object({
  id: Uuid(),
  org_id: Uuid(),
  site_id: Uuid().nullable(),
  url: z.string(),
  description: z.string().nullable(),
  events: z.array(z.enum(WEBHOOK_EVENTS)),
  active: z.boolean(),
  enabled: z.boolean().describe('same as active'),
  created_at: Timestamp,
  updated_at: Timestamp,
  consecutive_failures: z.number().int().describe('failed delivery attempts in a row; a success resets it'),
  failing_since: Timestamp.nullable().describe('first failure of the current streak'),
  disabled_at: Timestamp.nullable().describe(
    'when the dispatcher disabled the endpoint (410 Gone, or 20 failures in a row over at least 5 days)',
  ),
  disabled_reason: z.string().nullable(),
});
export const WebhookCreatedSchema = z.object({
  endpoint: WebhookEndpointSchema,
  signing_secret: z.string().describe('shown only in this response'),
});
export const WebhookListSchema = z.object({ endpoints: z.array(WebhookEndpointSchema) });
export const WebhookTestSchema = z.object({
  delivery_id: Uuid(),
  event_id: z.string().describe('the webhook-id header of the test delivery'),
  type: z.literal('webhook.test'),
});
