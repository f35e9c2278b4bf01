import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';

export const SiteQuerySchema = z.object({ site_id: Uuid() });
export type SiteQuery = z.infer<typeof SiteQuerySchema>;
