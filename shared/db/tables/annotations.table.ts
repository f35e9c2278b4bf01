import type { Generated } from 'kysely';
import type { Timestamp, GeneratedTimestamp, Json } from './columns.ts';

// Annotations and the audit log: what people did, and when.

export interface AnnotationTable {
  id: string;
  site_id: string;
  message: string;
  page: string | null;
  occurred_at: Timestamp;
  /** Email of the user or prefix of the key that added it. */
  created_by: string;
  created_at: GeneratedTimestamp;
}

export interface AuditLogTable {
  id: Generated<number>;
  org_id: string;
  site_id: string | null;
  /** user | key */
  actor_type: string;
  actor_id: string | null;
  /** The user's email or the key's display prefix. */
  actor: string;
  action: string;
  target_type: string;
  target_id: string;
  summary: Json;
  created_at: GeneratedTimestamp;
}
