import type { ColumnType, Generated } from 'kysely';

/**
 * The one kysely Database type. snake_case stays inside the data layer (queries and stores).
 * Timestamps are timestamptz (UTC); `day` columns are dates.
 */
type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** A timestamp with a database default: optional on insert. */
type GeneratedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Json = ColumnType<Record<string, unknown>, string | Record<string, unknown>, string | Record<string, unknown>>;

export interface OrgTable {
  id: string;
  name: string;
  plan: Generated<string>;
  trial_ends_at: Timestamp | null;
  created_at: GeneratedTimestamp;
  /** Enterprise (custom) limits; null means the plan's own. */
  site_limit: ColumnType<number | null, number | null | undefined, number | null>;
  session_limit: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface SiteTable {
  id: string;
  org_id: string;
  name: string;
  url: string;
  status: Generated<string>;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
  /** Soft deletion: the site is gone for every route, its sessions still count toward the month. */
  deleted_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** Days its events, signals and sessions are kept (31 to 90); null: the instance's 90. */
  retention_days: ColumnType<number | null, number | null | undefined, number | null>;
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
  created_at: GeneratedTimestamp;
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
  /** 'production' or 'staging' (migration 0100). */
  environment: Generated<'production' | 'staging'>;
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

/** What one session currently adds to `explore_session_buckets` (migration 0220; see processor/store/rollups.store.ts). */
export interface ExploreSessionStateTable {
  site_id: string;
  session_id: string;
  /** 'production' or 'staging', as the Explorer scopes sessions. */
  environment: string;
  /** The UTC hour the session started. */
  hour: Timestamp;
  /** The session's source, `(direct)` when it sent none. */
  source: string;
  /** The session's app version, '' when it sent none. */
  cohort: string;
  confused: boolean;
  converted: boolean;
  bounced: boolean;
  page_views: number;
  dwell_ms: number;
  last_seen_at: Timestamp;
}

/** The Explorer's session sums per (site, environment, day or hour, source, cohort, flags) (migration 0220). */
export interface ExploreSessionBucketTable {
  site_id: string;
  environment: string;
  /** 'day' or 'hour': the length of `bucket`. */
  grain: string;
  /** Start of the UTC day or hour the sessions started in. */
  bucket: Timestamp;
  source: string;
  cohort: string;
  confused: boolean;
  converted: boolean;
  bounced: boolean;
  sessions: number;
  page_views: number;
  dwell_ms: number;
}

/** Per site, environment, page and session: its last view of the page (migration 0222; the page route's 7-day viewers). */
export interface PageViewerTable {
  site_id: string;
  /** 'production' or 'staging'. */
  environment: string;
  page: string;
  session_id: string;
  last_view_at: Timestamp;
}

export interface PageScoreTable {
  site_id: string;
  /** 'production' or 'staging' (migration 0100). */
  environment: Generated<'production' | 'staging'>;
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
  /** 'production' or 'staging' (migration 0100). */
  environment: Generated<'production' | 'staging'>;
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
  signalling_again_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
  /** The deploy after which this issue was first seen (migration 0050). */
  introduced_by_deploy: ColumnType<string | null, string | null | undefined, string | null>;
}

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

export interface PageElementTable {
  site_id: string;
  /** 'production' or 'staging' (migration 0100). */
  environment: Generated<'production' | 'staging'>;
  page: string;
  cluster_selector: string;
  selector: string;
  label: string | null;
  signals: Json;
  signal_count: number;
  friction_score: number;
  dominant_signal: string | null;
  affected_users: number;
  recommendation: string | null;
  last_signal_at: Timestamp;
  updated_at: Timestamp;
}

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

export interface JobRunTable {
  job: string;
  scope: string;
  period: string;
  ran_at: GeneratedTimestamp;
}

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

// --- management plane (migrations 0003-0005) ---

export interface UserTable {
  id: string;
  /** Stored lowercased. */
  email: string;
  /** `scrypt$N$r$p$salt$hash` (shared/auth/passwords.ts). */
  password_hash: string;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
  /** When the address was proven (a mailed link followed); null: unverified (no SMTP, or made before 0010). */
  email_verified_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

/** A login: user tokens name it (`sid`); ended by logout, password change or its expiry. */
export interface UserSessionTable {
  id: string;
  user_id: string;
  created_at: GeneratedTimestamp;
  expires_at: Date;
  revoked_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

/** A signup waiting for its address to be proven: nothing is bound to the address until the link is followed. */
export interface EmailVerificationTable {
  id: string;
  email: string;
  /** sha256 of the mailed token. */
  token_hash: string;
  password_hash: string;
  org_name: string;
  plan: string;
  created_at: GeneratedTimestamp;
  expires_at: Date;
  used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

/** An erasure waiting for (or applied by) the processor that owns its site. */
export interface PrivacyErasureTable {
  id: string;
  site_id: string;
  requested_at: GeneratedTimestamp;
  applied_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

/** A password reset: single use (used_at), short-lived, the token stored only as its sha256. */
export interface PasswordResetTable {
  id: string;
  user_id: string;
  token_hash: string;
  created_at: GeneratedTimestamp;
  expires_at: Date;
  used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface MembershipTable {
  id: string;
  org_id: string;
  user_id: string;
  /** owner | admin | member | viewer */
  role: string;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
}

export interface InvitationTable {
  id: string;
  org_id: string;
  email: string;
  /** admin | member | viewer: owner is never granted by invite. */
  role: string;
  token_hash: string;
  invited_by: string | null;
  created_at: GeneratedTimestamp;
  expires_at: Timestamp;
  accepted_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

export interface InstanceSecretTable {
  name: string;
  value: string;
  created_at: GeneratedTimestamp;
}

export interface AlertRuleTable {
  id: string;
  site_id: string;
  name: string;
  /** spike | anomaly | new_page | trend | co_occurrence | positive | budget */
  trigger_type: string;
  threshold: number;
  cooldown_minutes: number;
  channels: string[];
  /** A page path, optionally ending in `*`; null means every page. */
  page_pattern: string | null;
  slack_channel: string | null;
  enabled: boolean;
  last_fired_at: Timestamp | null;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
}

export interface AlertTable {
  id: string;
  site_id: string;
  rule_id: string | null;
  rule_name: string;
  page: string | null;
  trigger_type: string;
  score_before: number | null;
  score_after: number | null;
  /** fired | acknowledged | investigating | resolved */
  status: Generated<string>;
  details: ColumnType<
    Record<string, unknown>,
    string | Record<string, unknown> | undefined,
    string | Record<string, unknown>
  >;
  triggered_at: Timestamp;
  acknowledged_at: Timestamp | null;
  resolved_at: Timestamp | null;
  resolved_reason: string | null;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
}

export interface WebhookEndpointTable {
  id: string;
  org_id: string;
  site_id: string | null;
  url: string;
  description: string | null;
  events: string[];
  active: boolean;
  /** The signing secret, sealed with the instance key (shared/auth/secret-box.ts): retrievable for signing. */
  secret_sealed: string;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
  deleted_at: Timestamp | null;
  /** Failed delivery attempts in a row (a success resets it); with failing_since, what disables an endpoint. */
  consecutive_failures: Generated<number>;
  failing_since: Timestamp | null;
  disabled_at: Timestamp | null;
  /** Why the dispatcher disabled it (410 Gone, or the failure streak); null when a user did. */
  disabled_reason: string | null;
}

export interface IntegrationTable {
  id: string;
  org_id: string;
  site_id: string;
  /** slack | pagerduty | linear | github */
  provider: string;
  /** The non-secret part of the provider config. */
  config: Json;
  /** Names of the config fields kept sealed (shown, their values never). */
  secret_fields: string[];
  /** The secret fields of the provider config, sealed as one JSON object. */
  secrets_sealed: string;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
}

export interface EnvironmentTable {
  id: string;
  site_id: string;
  name: string;
  created_at: GeneratedTimestamp;
}

export interface SdkConfigTable {
  environment_id: string;
  site_id: string;
  config: Json;
  updated_at: GeneratedTimestamp;
}

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

// --- deploys (migration 0050) ---

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
  confusion_after: ColumnType<number | null, number | null | undefined, number | null>;
  delta: ColumnType<number | null, number | null | undefined, number | null>;
  cohort: ColumnType<DeployCohort | null, string | null | undefined, string | null>;
  recorded_at: Timestamp;
  /** Last time the processor measured the after window. */
  measured_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** Set when confusion_after stops moving (the next deploy of the environment, or 24 h). */
  frozen_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** Verification looks already taken (names from shared/domain/deploy-verification.ts). */
  looks_done: ColumnType<string[], string[] | undefined, string[]>;
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

// --- delivery (migration 0060) ---

export interface NotificationDeliveryTable {
  id: string;
  /** The event's stable id: the `webhook-id` header, the same on every attempt. */
  event_id: string;
  event_type: string;
  org_id: string;
  site_id: string | null;
  /** webhook | slack | pagerduty | email */
  channel: string;
  /** The webhook endpoint or integration delivered to (null for email). */
  endpoint_id: string | null;
  /** Where it goes: the URL, or the recipients of an email. Never holds a secret. */
  target: string;
  /** The exact request body, identical on every attempt. */
  body: string;
  /** pending | succeeded | failed */
  status: Generated<string>;
  attempts: Generated<number>;
  /** Due time; while a dispatcher holds the row it is pushed ahead as a lease. */
  next_attempt_at: Timestamp;
  last_http_status: number | null;
  last_error: string | null;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
  completed_at: Timestamp | null;
  /** `alert:<id>` or `issue:<id>`: deliveries of one key to one target are sent in `queued_seq` order (0182). */
  order_key: string | null;
  queued_seq: Generated<number>;
}

export interface DeliveryAttemptTable {
  id: Generated<number>;
  delivery_id: string;
  org_id: string;
  attempt: number;
  /** succeeded | failed */
  status: string;
  http_status: number | null;
  error: string | null;
  duration_ms: number;
  started_at: Timestamp;
  /** When the next attempt is due (null: none will follow). */
  next_attempt_at: Timestamp | null;
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

export interface AlertRuleStateTable {
  rule_id: string;
  page: string;
  /** The condition on the last evaluations, oldest first: '1' held, '0' clear. */
  recent: string;
  consecutive: number;
  clear_since: Timestamp | null;
  /** Held back for flapping since then (null: not held back). */
  held_back_since: Timestamp | null;
  held_back_reason: string | null;
  updated_at: Timestamp;
}

/** The latest capture of a page on one device; a failed one has `png` null and `failure` set. */
export interface PageScreenshotTable {
  site_id: string;
  page: string;
  device: string;
  width: number;
  height: number;
  /** pg reads a Buffer, PGlite a Uint8Array. */
  png: Uint8Array | null;
  failure: string | null;
  captured_at: Timestamp;
  /** The site URL the capture was taken from (null before migration 0160). */
  source_url: string | null;
}

/** Captures started per site and UTC day. */
export interface ScreenshotQuotaTable {
  site_id: string;
  day: ColumnType<string, string, string>;
  used: number;
}

export interface Database {
  orgs: OrgTable;
  sites: SiteTable;
  api_keys: ApiKeyTable;
  events: EventTable;
  signals: SignalTable;
  sessions: SessionTable;
  explore_session_state: ExploreSessionStateTable;
  explore_session_buckets: ExploreSessionBucketTable;
  page_viewers: PageViewerTable;
  page_scores: PageScoreTable;
  score_history: ScoreHistoryTable;
  dead_letters: DeadLetterTable;
  ux_issues: UxIssueTable;
  issue_updates: IssueUpdateTable;
  page_elements: PageElementTable;
  outbox: OutboxTable;
  outbox_lease: OutboxLeaseTable;
  job_runs: JobRunTable;
  users: UserTable;
  memberships: MembershipTable;
  invitations: InvitationTable;
  instance_secrets: InstanceSecretTable;
  user_sessions: UserSessionTable;
  email_verifications: EmailVerificationTable;
  password_resets: PasswordResetTable;
  privacy_erasures: PrivacyErasureTable;
  alert_rules: AlertRuleTable;
  alerts: AlertTable;
  webhook_endpoints: WebhookEndpointTable;
  integrations: IntegrationTable;
  environments: EnvironmentTable;
  sdk_configs: SdkConfigTable;
  annotations: AnnotationTable;
  audit_log: AuditLogTable;
  deploys: DeployTable;
  deploy_verifications: DeployVerificationTable;
  notification_deliveries: NotificationDeliveryTable;
  delivery_attempts: DeliveryAttemptTable;
  degradation_events: DegradationEventTable;
  alert_rule_states: AlertRuleStateTable;
  page_screenshots: PageScreenshotTable;
  screenshot_quota: ScreenshotQuotaTable;
}
