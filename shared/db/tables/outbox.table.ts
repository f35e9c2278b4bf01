import type { Generated } from 'kysely';
import type { Timestamp, GeneratedTimestamp, Json } from './columns.ts';

// The transactional outbox and its relay lease.

export interface OutboxTable {
  id: Generated<number>;
  /** A notification kind (issue.created), or on the `replay` stream the full subject a dead letter goes back to. */
  subject_kind: string;
  msg_id: string;
  payload: Json;
  created_at: GeneratedTimestamp;
  published_at: Timestamp | null;
  /** Rows of one aggregate (an issue, an alert) are published in id order; null: its own aggregate. */
  aggregate: string | null;
  /** Failed publishes that were the row's own fault (an unavailable bus does not count). */
  attempts: Generated<number>;
  next_attempt_at: Timestamp | null;
  last_error: string | null;
  /** Set when the relay gave up on the row (after OUTBOX_MAX_ATTEMPTS); it no longer holds back its aggregate. */
  failed_at: Timestamp | null;
  /**
   * Where the relay publishes it: `notify` (notify.v1.<subject_kind>) or `replay` (a dead letter put back on its
   * own subject, held in subject_kind; the payload is published as stored). Written only by shared/notify/outbox.ts.
   */
  stream: Generated<'notify' | 'replay'>;
}

/** One row per relay role: the relay whose lease is current is the only one that publishes. */
export interface OutboxLeaseTable {
  name: string;
  holder: string;
  until: Timestamp;
}
