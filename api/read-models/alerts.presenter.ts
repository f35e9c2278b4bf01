import type { Selectable } from 'kysely';
import type { z } from 'zod';
import type { AlertTable } from '../../shared/db/tables/alerts.table.ts';
import { alertPayload } from '../../shared/notify/alert.ts';
import type { AlertSchema, AlertStatus } from './alerts.schema.ts';

export type AlertRow = Selectable<AlertTable>;

/**
 * An alert as every route answers it (read list and detail, status changes): the fields its events carry
 * (alertPayload), without the evaluation's summary, with the time of its last change.
 */
export function presentAlert(a: AlertRow): z.output<typeof AlertSchema> {
  const { summary: _summary, ...fields } = alertPayload(a);
  return { ...fields, status: a.status as AlertStatus, updated_at: a.updated_at.toISOString() };
}
