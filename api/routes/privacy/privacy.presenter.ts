import type { ErasedCounts } from './privacy.queries.ts';

/** The answer of an erasure: what was deleted now, and that the derived rows follow. */
export const presentErasure = (siteId: string, erased: ErasedCounts) => ({
  site_id: siteId,
  erased,
  derived: 'pending' as const,
});
