import type { z } from 'zod';
import type { AlertSchema } from '../../read-models/alerts.schema.ts';
import type { DeploySchema } from '../../read-models/deploys.schema.ts';

/** Shapes of the public API's answers the dashboard reads (see /v1/openapi.json). */
export interface PageScore {
  page: string;
  score: number;
  trend: string;
  dominant_signal: string | null;
}
export interface Scores {
  site_id: string;
  overall_score: number;
  overall_trend: string;
  pages: PageScore[];
}
export interface ScorePoint {
  date: string;
  score: number;
}
export interface Issue {
  id: string;
  title: string;
  page: string;
  selector: string | null;
  type: string;
  label: string | null;
  signal_count: number;
  affected_sessions: number;
  severity: number;
  status: string;
  note: string | null;
  assigned_to: string | null;
  frozen: boolean;
  last_signal_at: string | null;
  created_at: string | null;
  updated_at: string | null;
}
export interface Verification {
  deploy_id: string;
  deploy_version: string;
  result: string;
  signal_count_before: number;
  signal_count_after: number;
  verified_at: string;
  p_value?: number | null;
  look?: string;
}
export interface IssueDetail extends Issue {
  hypothesis: string | null;
  first_signal_at: string | null;
  resolved_at: string | null;
  sessions: { id: string; signals: number; timestamp: string | null }[];
  verifications: Verification[];
  introduced_by_deploy: { id?: string; version?: string; recorded_at?: string } | null;
  history: { source: string; kind: string; changes: unknown; reason: string | null; at: string | null }[];
}
/** An alert and a deploy: the API's own answer types (erased from the bundle). */
export type Alert = z.output<typeof AlertSchema>;
export type Deploy = z.output<typeof DeploySchema>;
export interface Degradation {
  id: string;
  scope: string;
  kind: string;
  subject: string;
  message: string;
  active: boolean;
  started_at: string;
}
export interface Delivery {
  id: string;
  channel: string;
  target: string;
  event_type: string;
  event_id: string;
  site_id: string | null;
  endpoint_id: string | null;
  attempt: number;
  status: string;
  http_status: number | null;
  error: string | null;
  at: string;
}
