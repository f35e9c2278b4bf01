import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';

export const SessionParamsSchema = z.object({ session_id: z.string().min(1).max(128) });
export const VisitorParamsSchema = z.object({ anonymous_id: z.string().min(1).max(128) });

export const ErasedSchema = z.object({
  site_id: Uuid(),
  erased: z.object({ sessions: z.number().int(), events: z.number().int(), signals: z.number().int() }),
  derived: z
    .literal('pending')
    .describe(
      "scores, issues and elements are rewritten without the erased rows by the site's processor at its next tick (within 5 minutes)",
    ),
});
