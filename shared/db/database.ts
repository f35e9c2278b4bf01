import type {
  EmailVerificationTable,
  InvitationTable,
  MembershipTable,
  PasswordResetTable,
  UserSessionTable,
  UserTable,
} from './tables/accounts.table.ts';
import type {
  AlertPageMarkTable,
  AlertPageWeekHourTable,
  AlertRuleStateTable,
  AlertRuleTable,
  AlertTable,
} from './tables/alerts.table.ts';
import type { AnnotationTable, AuditLogTable } from './tables/annotations.table.ts';
import type {
  DeliveryAttemptTable,
  IntegrationTable,
  NotificationDeliveryTable,
  WebhookEndpointTable,
} from './tables/delivery.table.ts';
import type { DeployTable, DeployVerificationTable } from './tables/deploys.table.ts';
import type { EventTable, SessionTable, SignalTable } from './tables/events.table.ts';
import type { IssueUpdateTable, UxIssueTable } from './tables/issues.table.ts';
import type {
  DeadLetterTable,
  DegradationEventTable,
  DemoDeferredIndexTable,
  JobRunTable,
} from './tables/operations.table.ts';
import type { OutboxLeaseTable, OutboxTable } from './tables/outbox.table.ts';
import type { PrivacyErasureTable } from './tables/privacy.table.ts';
import type {
  PageCurrentScoreTable,
  PageElementTable,
  PageScoreTable,
  ScoreAnswerVersionTable,
  ScoreHistoryTable,
  SiteScoreDayTable,
} from './tables/scores.table.ts';
import type { PageScreenshotTable, ScreenshotQuotaTable } from './tables/screenshots.table.ts';
import type {
  ApiKeyTable,
  EnvironmentTable,
  InstanceSecretTable,
  OrgTable,
  SdkConfigTable,
  SiteTable,
} from './tables/tenancy.table.ts';
import type {
  ExplorePageBucketTable,
  ExploreSessionStateTable,
  ExploreSessionBucketTable,
} from './tables/explore.table.ts';
import type { PartitionLeaseTable } from './tables/partitions.table.ts';
import type {
  ExploreSessionKeyTable,
  JourneyStepTable,
  PageHeatmapHourTable,
  PageViewerTable,
  PageWeightedSignalTable,
} from './tables/rollups.table.ts';

/**
 * The one kysely Database type, assembled from the table files (tables/*.table.ts: one per feature, each with its column
 * comments and row types). snake_case stays inside the data layer (queries and stores). A migration and its table
 * file must agree: schema-types.int.test.ts compares them on PostgreSQL and on the embedded database.
 */
export interface Database {
  orgs: OrgTable;
  sites: SiteTable;
  api_keys: ApiKeyTable;
  events: EventTable;
  signals: SignalTable;
  sessions: SessionTable;
  page_scores: PageScoreTable;
  page_current_scores: PageCurrentScoreTable;
  score_history: ScoreHistoryTable;
  site_score_days: SiteScoreDayTable;
  score_answer_versions: ScoreAnswerVersionTable;
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
  alert_page_marks: AlertPageMarkTable;
  alert_page_week_hours: AlertPageWeekHourTable;
  page_screenshots: PageScreenshotTable;
  screenshot_quota: ScreenshotQuotaTable;
  explore_session_state: ExploreSessionStateTable;
  explore_session_buckets: ExploreSessionBucketTable;
  partition_leases: PartitionLeaseTable;
  page_viewers: PageViewerTable;
  page_weighted_signals: PageWeightedSignalTable;
  page_heatmap_hours: PageHeatmapHourTable;
  journey_steps: JourneyStepTable;
  explore_session_keys: ExploreSessionKeyTable;
  explore_page_buckets: ExplorePageBucketTable;
  demo_deferred_indexes: DemoDeferredIndexTable;
}
