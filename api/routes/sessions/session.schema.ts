import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { QueryText } from '../pages/page.schema.ts';

export const SessionQuerySchema = z.object({
  site_id: Uuid(),
  session_id: QueryText(132).describe('the SDK session id, with or without the ses_ prefix the API shows'),
});
export type SessionQuery = z.infer<typeof SessionQuerySchema>;
