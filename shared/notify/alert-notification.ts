import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/database.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** The alert fields every alert event carries (`data.alert` of the webhook body). */
export interface AlertRecord {
  id: string;
  site_id: string;
  rule_id: string | null;
  rule_name: string;
  page: string | null;
  trigger_type: string;
  score_before: number | null;
  score_after: number | null;
  status: string;
  triggered_at: Date;
  acknowledged_at?: Date | null;
  resolved_at?: Date | null;
  resolved_reason: string | null;
  details?: Record<string, unknown>;
}

export type AlertEventKind = 'alert.triggered' | 'alert.acknowledged' | 'alert.resolved' | 'score.spike';

/**
 * One notification about an alert, for the outbox. Its id is stable per (kind, alert): an alert fires once and
 * moves forward only, so a retried write or relay never makes a second event.
 */
export function alertNotification(kind: AlertEventKind, a: AlertRecord, at: Date): { kind: string; msgId: string; payload: Record<string, unknown> } {
  const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);
  return {
    kind,
    msgId: `${kind}:${a.id}`,
    payload: {
      event: kind,
      occurred_at: at.toISOString(),
      site_id: a.site_id,
      alert: {
        id: a.id, site_id: a.site_id, rule_id: a.rule_id, rule_name: a.rule_name, page: a.page, trigger_type: a.trigger_type,
        score_before: a.score_before, score_after: a.score_after, status: a.status, triggered_at: a.triggered_at.toISOString(),
        acknowledged_at: iso(a.acknowledged_at), resolved_at: iso(a.resolved_at), resolved_reason: a.resolved_reason,
        summary: typeof a.details?.summary === 'string' ? a.details.summary : undefined,
      },
    },
  };
}

/** Queues notifications in the caller's transaction (the outbox relay publishes them after the commit). */
export async function enqueueNotifications(db: Db, messages: readonly { kind: string; msgId: string; payload: Record<string, unknown> }[]): Promise<void> {
  if (messages.length === 0) return;
  await db.insertInto('outbox').values(messages.map((m) => ({ subject_kind: m.kind, msg_id: m.msgId, payload: JSON.stringify(m.payload), published_at: null }))).execute();
}
