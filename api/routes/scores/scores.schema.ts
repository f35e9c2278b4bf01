import { z } from 'zod';

export const SiteQuerySchema = z.object({ site_id: z.uuid() });
export type SiteQuery = z.infer<typeof SiteQuerySchema>;
