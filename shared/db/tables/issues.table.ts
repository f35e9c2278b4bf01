import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Timestamp, GeneratedTimestamp, Json } from './columns.ts';

// UX issues and their change log.

export interface UxIssueTable {
  id: string;
  site_id: string;
  /** 'production' or 'staging' (migration 0100). */
  environment: Generated<'production' | 'staging'>;
  page: string;
  /** The canonical selector the cluster is keyed by. */
  cluster_selector: string;
  /** The latest raw selector the SDK sent (shown, and usable for the element heatmap). */
  selector: string;
  signal_type: string;
  label: string | null;
  title: string;
  hypothesis: string;
  signal_count: number;
  affected_sessions: number;
  severity: number;
  /** open | triaged | in_progress | verified | resolved | ignored | regressed */
  status: Generated<string>;
  note: string | null;
  assigned_to: string | null;
  frozen: Generated<boolean>;
  merged_into: string | null;
  /** Top sessions of the cluster: [{ session_id, signals, last_signal_at }], most signals first. */
  evidence: ColumnType<EvidenceRow[], string | undefined, string>;
  first_signal_at: Timestamp;
  last_signal_at: Timestamp;
  resolved_at: Timestamp | null;
  /** When the closed issue started signalling again (the engine's live rule, migration 0120); older than resolved_at: an earlier closure's. */
  signalling_again_at: Generated<Date | null>;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
  /** The deploy after which this issue was first seen (migration 0050). */
  introduced_by_deploy: Generated<string | null>;
}

/** An issue row as selected. */
export type IssueRow = Selectable<UxIssueTable>;

export interface EvidenceRow {
  session_id: string;
  signals: number;
  /** ISO 8601. */
  last_signal_at: string;
}

export interface IssueUpdateTable {
  id: Generated<number>;
  issue_id: string;
  /** engine | triage | api */
  source: string;
  kind: string;
  changes: Json;
  reason: string | null;
  created_at: GeneratedTimestamp;
}
