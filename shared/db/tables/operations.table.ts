import type { ColumnType, Generated } from 'kysely';
import type { Timestamp, GeneratedTimestamp } from './columns.ts';

// Operational bookkeeping: dead letters, job runs, degradation events.

export interface DeadLetterTable {
  id: Generated<number>;
  stream: string;
  subject: string;
  stream_seq: number;
  reason: string;
  payload: string;
  created_at: GeneratedTimestamp;
  /** Set once by `friction dead-letters replay`, with the operator who ran it (see 0180). */
  replayed_at: Timestamp | null;
  replayed_by: string | null;
}

/** Secondary indexes `friction demo` dropped for a bulk COPY, kept until each exists again (ops/demo-indexes.ts). */
export interface DemoDeferredIndexTable {
  name: string;
  definition: string;
}

export interface JobRunTable {
  job: string;
  scope: string;
  period: string;
  ran_at: GeneratedTimestamp;
}

export interface DegradationEventTable {
  id: string;
  /** null: instance-wide (bus, database, processor lag). */
  org_id: string | null;
  /** bus_unreachable | database_unreachable | processor_lag | partition_paused | dead_letters | endpoint_disabled | over_quota */
  kind: string;
  /** What degraded, e.g. an endpoint id; one open event per (kind, subject). */
  subject: string;
  message: string;
  started_at: Timestamp;
  recovered_at: Timestamp | null;
  details: ColumnType<Record<string, unknown>, string | undefined, string>;
}
