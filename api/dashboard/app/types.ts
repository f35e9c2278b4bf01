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
export interface Alert {
  id: string;
  site_id: string;
  rule_name: string;
  page: string | null;
  trigger_type: string;
  score_before: number | null;
  score_after: number | null;
  status: string;
  triggered_at: string;
  acknowledged_at: string | null;
  resolved_at: string | null;
  resolved_reason?: string | null;
}
export interface RelatedIssue {
  issue_id: string;
  title: string;
  page: string;
  signal_type: string;
  severity: number;
  status: string;
  relation: string;
  record: Verification | null;
}
export interface Deploy {
  id: string;
  version: string;
  environment: string;
  confusion_before: number;
  confusion_after: number | null;
  delta: number | null;
  recorded_at: string;
  related_issues: RelatedIssue[];
  verdict: 'PASS' | 'WARN' | 'FAIL';
  verdict_reasons: string[];
  commit_sha: string | null;
  description: string | null;
  cohort: { kind: string; sessions: number } | null;
}
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
