import type { ColumnType, Generated } from 'kysely';
import type { Timestamp, GeneratedTimestamp, NullableTimestamp } from './columns.ts';

// Deploys and their verifications (migration 0050).

/** What counted as "after" a deploy: sessions on its version, or every session after a grace period. */
export interface DeployCohort {
  kind: 'version' | 'time_window';
  /** ISO 8601: start of the after window. */
  from: string;
  /** ISO 8601: end of the data measured so far. */
  to: string;
  /** Post-deploy sessions measured. */
  sessions: number;
}

export interface DeployTable {
  id: string;
  site_id: string;
  /** production | staging */
  environment: string;
  version: string;
  commit_sha: string | null;
  url: string | null;
  description: string | null;
  confusion_before: number;
  confusion_after: Generated<number | null>;
  delta: Generated<number | null>;
  cohort: ColumnType<DeployCohort | null, string | null | undefined, string | null>;
  recorded_at: Timestamp;
  /** Last time the processor measured the after window. */
  measured_until: NullableTimestamp;
  /** Set when confusion_after stops moving (the next deploy of the environment, or 24 h). */
  frozen_at: NullableTimestamp;
  /** Verification looks already taken (names from shared/domain/deploy-verification.ts). */
  looks_done: Generated<string[]>;
  idempotency_key: string | null;
  created_by: string;
  created_at: GeneratedTimestamp;
}

export interface DeployVerificationTable {
  id: Generated<number>;
  deploy_id: string;
  issue_id: string;
  site_id: string;
  look: string;
  /** fix (an open issue: verified?) | regression (a closed issue: back?) */
  test: string;
  /** verified | not_verified | insufficient_data (fix); regressed | not_regressed | insufficient_data (regression) */
  result: string;
  signal_count_before: number;
  signal_count_after: number;
  affected_before: number;
  affected_after: number;
  sessions_before: number;
  sessions_after: number;
  p_value: number | null;
  alpha: number;
  verified_at: Timestamp;
  /** Which comparison decided (migration 0121): concurrent (old-version sessions of the same hours) | before_window. When concurrent, the *_before counts are the control's. */
  control: ColumnType<'concurrent' | 'before_window', 'concurrent' | 'before_window' | undefined, never>;
}
