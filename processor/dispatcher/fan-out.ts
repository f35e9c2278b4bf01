import { sql, type Transaction } from 'kysely';
import { z } from 'zod';
import type { Database } from '../../shared/db/database.ts';
import { insertDeliveries, type NewDelivery } from '../../shared/db/queries/deliveries.queries.ts';
import { newId } from '../../shared/ids.ts';
import { eventBody, eventIdOf, type WebhookEvent } from '../../shared/notify/webhook-event.ts';
import type { ChannelMessages } from './channels.ts';

/**
 * A notification as the outbox relay publishes it on `notify.v1.<kind>`: the producer's payload plus
 * `notification_id` (the outbox row's stable id). Unknown fields are kept: they are the event's data.
 */
export const NotificationSchema = z.looseObject({
  notification_id: z.string().min(1).max(500).optional(),
  event: z.string().optional(),
  occurred_at: z.string().optional(),
  site_id: z.string().optional(),
});
export type Notification = z.infer<typeof NotificationSchema>;

/** The site a notification is about: top-level, or inside the issue / alert / deploy it carries. */
export function siteOf(n: Notification): string | null {
  for (const k of ['issue', 'alert', 'deploy'] as const) {
    const inner = n[k] as { site_id?: unknown } | undefined;
    if (inner && typeof inner.site_id === 'string') return inner.site_id;
  }
  return typeof n.site_id === 'string' ? n.site_id : null;
}

/** The public event of a notification: a stable id, its kind, when it happened, its site, and the rest as data. */
export function toWebhookEvent(kind: string, n: Notification, fallbackId: string, now: Date): WebhookEvent {
  const {
    notification_id,
    event: _event,
    occurred_at,
    site_id: _site,
    channels: _channels,
    ...data
  } = n as Notification & { channels?: unknown };
  return {
    id: eventIdOf(notification_id ?? fallbackId),
    type: kind,
    timestamp:
      occurred_at && !Number.isNaN(Date.parse(occurred_at)) ? new Date(occurred_at).toISOString() : now.toISOString(),
    site_id: siteOf(n),
    data,
  };
}

/**
 * The alert or issue an event is about: its deliveries to one target are sent in the order they were queued (a
 * later one waits while an earlier one retries), so a receiver's last event about it is the latest.
 */
function orderKeyOf(n: Notification): string | null {
  for (const k of ['alert', 'issue'] as const) {
    const inner = n[k] as { id?: unknown } | undefined;
    if (inner && typeof inner.id === 'string') return `${k}:${inner.id}`;
  }
  return null;
}

/** Alert channels that are not webhooks (`mcp` needs no delivery: assistants read alerts from the MCP context). */
const PUSH_CHANNELS = ['slack', 'pagerduty', 'email'] as const;

/**
 * Turns notifications into queued deliveries, in the caller's transaction: one per subscribed active webhook
 * endpoint (the org's and the site's own), and for alert events one per channel of the rule (Slack, PagerDuty,
 * email). Alert events reach webhook endpoints when the rule lists `webhook` or no channel at all.
 */
export async function fanOut(
  trx: Transaction<Database>,
  items: readonly { kind: string; n: Notification; fallbackId: string }[],
  channels: ChannelMessages,
  now: Date,
): Promise<number> {
  const rows: NewDelivery[] = [];
  for (const { kind, n, fallbackId } of items) {
    const event = toWebhookEvent(kind, n, fallbackId, now);
    if (!event.site_id) continue;
    const site = await trx.selectFrom('sites').select(['org_id']).where('id', '=', event.site_id).executeTakeFirst();
    if (!site) continue;
    // An alert's channels are its rule's, read now (a rule deleted since: webhooks only).
    const alert = n.alert as { rule_id?: unknown } | undefined;
    const rule =
      kind.startsWith('alert.') && typeof alert?.rule_id === 'string'
        ? await trx
            .selectFrom('alert_rules')
            .select(['channels', 'slack_channel'])
            .where('id', '=', alert.rule_id)
            .executeTakeFirst()
        : undefined;
    const ruleChannels = rule ? rule.channels : null;
    const forChannels =
      rule?.slack_channel && alert ? { ...n, alert: { ...alert, slack_channel: rule.slack_channel } } : n;
    const toWebhooks =
      !kind.startsWith('alert.') ||
      ruleChannels === null ||
      ruleChannels.length === 0 ||
      ruleChannels.includes('webhook');
    const base = {
      event_id: event.id,
      event_type: kind,
      org_id: site.org_id,
      site_id: event.site_id,
      next_attempt_at: now,
      order_key: orderKeyOf(n),
    };
    if (toWebhooks) {
      const endpoints = await trx
        .selectFrom('webhook_endpoints')
        .select(['id', 'url'])
        .where('org_id', '=', site.org_id)
        .where('active', '=', true)
        .where('deleted_at', 'is', null)
        .where((eb) => eb.or([eb('site_id', 'is', null), eb('site_id', '=', event.site_id!)]))
        .where(sql<boolean>`${kind} = any(events)`)
        .execute();
      const body = eventBody(event);
      for (const e of endpoints)
        rows.push({ ...base, id: newId(), channel: 'webhook', endpoint_id: e.id, target: e.url, body });
    }
    if (kind.startsWith('alert.') && ruleChannels) {
      for (const ch of PUSH_CHANNELS) {
        if (!ruleChannels.includes(ch)) continue;
        const built = await channels[ch](trx, { event, orgId: site.org_id, notification: forChannels });
        for (const b of built)
          rows.push({ ...base, id: newId(), channel: ch, endpoint_id: b.endpointId, target: b.target, body: b.body });
      }
    }
  }
  return insertDeliveries(trx, rows);
}
