import type { Generated } from 'kysely';
import type { GeneratedTimestamp } from './columns.ts';

// Privacy erasures.

/** An erasure waiting for (or applied by) the processor that owns its site. */
export interface PrivacyErasureTable {
  id: string;
  site_id: string;
  requested_at: GeneratedTimestamp;
  applied_at: Generated<Date | null>;
}
