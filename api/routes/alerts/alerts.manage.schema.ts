import { z } from 'zod';
import { Timestamp } from '../../http/common.schema.ts';
import { ALERT_STATUSES, SETTABLE_ALERT_STATUSES } from './alert-transitions.ts';
import { Uuid } from '../../../shared/contracts/uuid.ts';

export const AlertPatchSchema = z
  .strictObject({
    status: z.enum(SETTABLE_ALERT_STATUSES),
    resolved_reason: z.string().trim().min(1).max(500).optional(),
  })
  .refine((b) => b.resolved_reason === undefined || b.status === 'resolved', {
    path: ['resolved_reason'],
    error: 'only accompanies status resolved',
  });

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
