import type { Generated } from 'kysely';
import type { Timestamp, GeneratedTimestamp, Json } from './columns.ts';

// Outbound delivery (migration 0060): webhook endpoints, integrations, deliveries and their attempts.

export interface WebhookEndpointTable {
  id: string;
  org_id: string;
  site_id: string | null;
  url: string;
  description: string | null;
  events: string[];
  active: boolean;
  /** The signing secret, sealed with the instance key (shared/auth/secret-box.ts): retrievable for signing. */
  secret_sealed: string;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
  deleted_at: Timestamp | null;
  /** Failed delivery attempts in a row (a success resets it); with failing_since, what disables an endpoint. */
  consecutive_failures: Generated<number>;
  failing_since: Timestamp | null;
  disabled_at: Timestamp | null;
  /** Why the dispatcher disabled it (410 Gone, or the failure streak); null when a user did. */
  disabled_reason: string | null;
}

export interface IntegrationTable {
  id: string;
  org_id: string;
  site_id: string;
  /** slack | pagerduty | linear | github */
  provider: string;
  /** The non-secret part of the provider config. */
  config: Json;
  /** Names of the config fields kept sealed (shown, their values never). */
  secret_fields: string[];
  /** The secret fields of the provider config, sealed as one JSON object. */
  secrets_sealed: string;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
}

export interface NotificationDeliveryTable {
  id: string;
  /** The event's stable id: the `webhook-id` header, the same on every attempt. */
  event_id: string;
  event_type: string;
  org_id: string;
  site_id: string | null;
  /** webhook | slack | pagerduty | email */
  channel: string;
  /** The webhook endpoint or integration delivered to (null for email). */
  endpoint_id: string | null;
  /** Where it goes: the URL, or the recipients of an email. Never holds a secret. */
  target: string;
  /** The exact request body, identical on every attempt. */
  body: string;
  /** pending | succeeded | failed */
  status: Generated<string>;
  attempts: Generated<number>;
  /** Due time; while a dispatcher holds the row it is pushed ahead as a lease. */
  next_attempt_at: Timestamp;
  /** Whether `next_attempt_at` is a dispatcher's claim (a lease while it sends), not a scheduled retry (0440). */
  claimed: Generated<boolean>;
  last_http_status: number | null;
  last_error: string | null;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
  completed_at: Timestamp | null;
  /** `alert:<id>` or `issue:<id>`: deliveries of one key to one target are sent in `queued_seq` order (0182). */
  order_key: string | null;
  queued_seq: Generated<number>;
}

export interface DeliveryAttemptTable {
  id: Generated<number>;
  delivery_id: string;
  org_id: string;
  attempt: number;
  /** succeeded | failed */
  status: string;
  http_status: number | null;
  error: string | null;
  duration_ms: number;
  started_at: Timestamp;
  /** When the next attempt is due (null: none will follow). */
  next_attempt_at: Timestamp | null;
}
