import type { Selectable } from 'kysely';
import type { AlertTable } from '../db/tables/alerts.table.ts';
import type { OutboxMessage } from './outbox.ts';

/**
 * An alert as its table holds it: the one shape the evaluator writes and resolves, the API moves forward, and every
 * alert event is built from (`alertPayload`). Derived from the table, so a column added there reaches all of them.
 */
export type Alert = Omit<Selectable<AlertTable>, 'created_at' | 'updated_at'>;

/**
 * `data.alert` of every alert event, as webhooks receive it and the dispatcher's channels (Slack, PagerDuty, email)
 * read it: the row's fields with times in ISO 8601, and the evaluation's `details.summary` in words.
 */
export type AlertPayload = ReturnType<typeof alertPayload>;

export function alertPayload(a: Alert) {
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    id: a.id,
    site_id: a.site_id,
    rule_id: a.rule_id,
    rule_name: a.rule_name,
    page: a.page,
    trigger_type: a.trigger_type,
    score_before: a.score_before,
    score_after: a.score_after,
    status: a.status,
    triggered_at: a.triggered_at.toISOString(),
    acknowledged_at: iso(a.acknowledged_at),
    resolved_at: iso(a.resolved_at),
    resolved_reason: a.resolved_reason,
    summary: typeof a.details?.summary === 'string' ? a.details.summary : undefined,
  };
}

export type AlertEventKind = 'alert.triggered' | 'alert.acknowledged' | 'alert.resolved' | 'score.spike';

/**
 * One event about an alert, for the outbox. Its id is stable per (kind, alert): an alert fires once and moves
 * forward only, so a retried write or relay never makes a second event. Every event of one alert shares the
 * aggregate `alert:<id>`, so the relay publishes them in the order they were queued.
 */
export function alertNotification(kind: AlertEventKind, a: Alert, at: Date): OutboxMessage {
  return {
    kind,
    msgId: `${kind}:${a.id}`,
    aggregate: `alert:${a.id}`,
    payload: { event: kind, occurred_at: at.toISOString(), site_id: a.site_id, alert: alertPayload(a) },
  };
}
