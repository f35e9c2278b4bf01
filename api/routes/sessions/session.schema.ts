import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';

export const SessionQuerySchema = z.object({
  site_id: Uuid(),
  session_id: z.string().min(1).max(132).describe('the SDK session id, with or without the ses_ prefix the API shows'),
});
export type SessionQuery = z.infer<typeof SessionQuerySchema>;
