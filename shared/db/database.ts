import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

/**
 * The one kysely Database type. snake_case stays inside the data layer (queries and stores).
 * Timestamps are timestamptz (UTC); `day` columns are dates.
 */
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json = ColumnType<Record<string, unknown>, string | Record<string, unknown>, string | Record<string, unknown>>;

export interface OrgTable {
  id: string;
  name: string;
  plan: Generated<string>;
  trial_ends_at: Timestamp | null;
  created_at: Generated<Timestamp>;
}

export interface SiteTable {
  id: string;
  org_id: string;
  name: string;
  url: string;
  status: Generated<string>;
  created_at: Generated<Timestamp>;
  updated_at: Generated<Timestamp>;
}

export interface ApiKeyTable {
  id: string;
  org_id: string;
  site_id: string | null;
  /** publishable | secret | mcp */
  key_type: string;
  /** The first characters of the key, for display ("svc_sec_AbCd…"). */
  key_prefix: string;
  key_hash: string;
  scopes: string[];
  name: string | null;
  created_at: Generated<Timestamp>;
  revoked_at: Timestamp | null;
}

export interface EventTable {
  site_id: string;
  id: string;
  ts: Timestamp;
  received_at: Timestamp;
  session_id: string;
  type: string;
  page: string;
  signal: string | null;
  name: string | null;
  selector: string | null;
  label: string | null;
  x: number | null;
  y: number | null;
  vx: number | null;
  vy: number | null;
  px: number | null;
  py: number | null;
  value: number | null;
  meta: Json | null;
  device: string;
  source: string | null;
  app_version: string | null;
  environment: string | null;
}

export interface SignalTable {
  site_id: string;
  event_id: string;
  ts: Timestamp;
  session_id: string;
  page: string;
  signal_type: string;
  selector: string | null;
  label: string | null;
  x: number | null;
  y: number | null;
  vx: number | null;
  vy: number | null;
  px: number | null;
  py: number | null;
  device: string;
}

export interface SessionTable {
  site_id: string;
  id: string;
  started_at: Timestamp;
  last_seen_at: Timestamp;
  device: string;
  source: string | null;
  referrer: string | null;
  app_version: string | null;
  environment: string | null;
  anonymous_id: string | null;
  first_page: string;
  last_page: string;
  event_count: number;
  page_views: number;
  signal_count: number;
  conversions: number;
  revenue: number;
}

export interface PageScoreTable {
  site_id: string;
  page: string;
  /** Start of the hour this row scores; the latest row per page is the page's current score. */
  window_start: Timestamp;
  score: number;
  friction: number;
  sessions: number;
  page_views: number;
  signal_count: number;
  dominant_signal: string | null;
  trend: string;
  updated_at: Timestamp;
}

export interface ScoreHistoryTable {
  site_id: string;
  page: string;
  day: ColumnType<string, string, string>;
  score: number;
  sessions: number;
  page_views: number;
  signal_count: number;
  dominant_signal: string | null;
  updated_at: Timestamp;
}

export interface UxIssueTable {
  id: string;
  site_id: string;
  page: string;
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
  first_signal_at: Timestamp;
  last_signal_at: Timestamp;
  resolved_at: Timestamp | null;
  created_at: Generated<Timestamp>;
  updated_at: Generated<Timestamp>;
}

export interface IssueSessionTable {
  issue_id: string;
  session_id: string;
  signals: number;
  last_signal_at: Timestamp;
}

export interface DeadLetterTable {
  id: Generated<number>;
  stream: string;
  subject: string;
  stream_seq: number;
  reason: string;
  payload: string;
  created_at: Generated<Timestamp>;
}

export interface Database {
  orgs: OrgTable;
  sites: SiteTable;
  api_keys: ApiKeyTable;
  events: EventTable;
  signals: SignalTable;
  sessions: SessionTable;
  page_scores: PageScoreTable;
  score_history: ScoreHistoryTable;
  dead_letters: DeadLetterTable;
  ux_issues: UxIssueTable;
  issue_sessions: IssueSessionTable;
}

export type SiteRow = Selectable<SiteTable>;
export type ApiKeyRow = Selectable<ApiKeyTable>;
export type NewEvent = Insertable<EventTable>;
export type PageScoreRow = Selectable<PageScoreTable>;
