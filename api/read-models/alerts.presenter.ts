import type { Selectable } from 'kysely';
import type { z } from 'zod';
import type { AlertTable } from '../../shared/db/tables/alerts.table.ts';
import { isoOrNull } from '../http/present.ts';
import type { AlertSchema, AlertStatus } from './alerts.schema.ts';

export type AlertRow = Selectable<AlertTable>;

/** An alert as every route answers it (read list and detail, status changes). */
export function presentAlert(a: AlertRow): z.output<typeof AlertSchema> {
  return {
    id: a.id,
    site_id: a.site_id,
    rule_id: a.rule_id,
    rule_name: a.rule_name,
    page: a.page,
    trigger_type: a.trigger_type,
    score_before: a.score_before,
    score_after: a.score_after,
    status: a.status as AlertStatus,
    triggered_at: a.triggered_at.toISOString(),
    acknowledged_at: isoOrNull(a.acknowledged_at),
    resolved_at: isoOrNull(a.resolved_at),
    resolved_reason: a.resolved_reason,
    updated_at: a.updated_at.toISOString(),
  };
}
