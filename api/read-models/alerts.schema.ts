import { z } from 'zod';
import { Uuid } from '../../shared/contracts/uuid.ts';
import { Timestamp } from '../http/common.schema.ts';

/** An alert's statuses, in the only order it moves through (api/routes/alerts/alert-transitions.ts). */
export const ALERT_STATUSES = ['fired', 'acknowledged', 'investigating', 'resolved'] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];

/** An alert as every route answers it (the alert list and detail, status changes, a page's active alerts). */
export const AlertSchema = z
  .object({
    id: Uuid(),
    site_id: Uuid(),
    rule_id: Uuid().nullable(),
    rule_name: z.string(),
    page: z.string().nullable(),
    trigger_type: z.string(),
    score_before: z.number().nullable(),
    score_after: z.number().nullable(),
    status: z.enum(ALERT_STATUSES),
    triggered_at: Timestamp,
    acknowledged_at: Timestamp.nullable(),
    resolved_at: Timestamp.nullable(),
    resolved_reason: z.string().nullable(),
    updated_at: Timestamp,
  })
  .meta({ id: 'Alert' });
