import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { EnvironmentParam } from '../../../shared/contracts/environment.ts';
import { QueryText } from '../../http/common.schema.ts';

export const SessionQuerySchema = z.object({
  site_id: Uuid(),
  session_id: QueryText(132).describe('the SDK session id, with or without the ses_ prefix the API shows'),
  environment: EnvironmentParam.describe('production (default) or staging: a session of the other environment is 404'),
});

/** `/query/session` and `/v1/session`: each event carries its time as both `occurred_at` and `timestamp`. */
export const SessionResponseSchema = z.object({
  session_id: z.string(),
  page_count: z.number().int(),
  signal_count: z.number().int(),
  started_at: z.iso.datetime(),
  events: z.array(
    z.discriminatedUnion('type', [
      z.object({
        type: z.literal('signal'),
        signal: z.string().nullable(),
        selector: z.string().nullable(),
        page: z.string(),
        occurred_at: z.iso.datetime(),
        timestamp: z.iso.datetime(),
      }),
      z.object({
        type: z.literal('page_view'),
        selector: z.string().nullable(),
        page: z.string(),
        occurred_at: z.iso.datetime(),
        timestamp: z.iso.datetime(),
      }),
    ]),
  ),
  truncated: z.boolean(),
});
