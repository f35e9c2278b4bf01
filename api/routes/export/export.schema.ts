import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { StorableInstant } from '../../../shared/contracts/instant.ts';
import { EnvironmentParam } from '../../../shared/contracts/environment.ts';

const Instant = StorableInstant().transform((v) => new Date(v));

export const ExportQuerySchema = z
  .object({
    site_id: Uuid(),
    from: Instant.optional().describe('ISO 8601; events at or after it (default: the oldest kept)'),
    to: Instant.optional().describe('ISO 8601; events before it (default: when the export starts)'),
    environment: EnvironmentParam.describe(
      'production (default) or staging: the environment whose events are exported',
    ),
  })
  .refine((q) => !q.from || !q.to || q.from < q.to, { path: ['to'], message: 'must be after from' });
export type ExportQuery = z.infer<typeof ExportQuerySchema>;
