import type { Migration } from 'kysely/migration';
import * as m0001 from './0001_create_core.ts';
import * as m0002 from './0002_create_ux_issues.ts';
import * as m0003 from './0003_create_accounts.ts';
import * as m0004 from './0004_create_management.ts';
import * as m0005 from './0005_create_audit_log.ts';
import * as m0006 from './0006_outbox_retries.ts';
import * as m0010 from './0010_sessions_and_email_ownership.ts';
import * as m0050 from './0050_create_deploys.ts';
import * as m0060 from './0060_create_deliveries.ts';
import * as m0070 from './0070_create_page_screenshots.ts';
import * as m0080 from './0080_outbox_commands.ts';
import * as m0100 from './0100_environment_scoped_results.ts';
import * as m0110 from './0110_page_elements_write_cost.ts';
import * as m0120 from './0120_issue_signalling_again.ts';
import * as m0121 from './0121_verification_control.ts';
import * as m0130 from './0130_sessions_recent_first.ts';
import * as m0160 from './0160_screenshot_source_url.ts';
import * as m0170 from './0170_password_resets.ts';
import * as m0171 from './0171_privacy_erasures.ts';
import * as m0172 from './0172_site_retention.ts';
import * as m0180 from './0180_dead_letter_replay.ts';
import * as m0181 from './0181_retire_commands_stream.ts';
import * as m0182 from './0182_delivery_order.ts';
import * as m0220 from './0220_explore_session_rollup.ts';
import * as m0221 from './0221_score_history_site_days.ts';
import * as m0222 from './0222_page_viewers.ts';
import * as m0250 from './0250_partition_leases.ts';
import * as m0260 from './0260_heatmap_indexes.ts';
import * as m0261 from './0261_journeys_recent_sessions.ts';
import * as m0270 from './0270_alert_page_rollups.ts';
import * as m0280 from './0280_explore_session_keys.ts';
import * as m0281 from './0281_insights_indexes.ts';
import * as m0282 from './0282_explore_page_buckets.ts';
import * as m0290 from './0290_demo_deferred_indexes.ts';
import * as m0300 from './0300_alert_rollups_linear.ts';
import * as m0310 from './0310_explore_event_type_keys.ts';
import * as m0311 from './0311_page_weighted_signals.ts';
import * as m0320 from './0320_issue_list_indexes.ts';
import * as m0330 from './0330_page_reads_indexes.ts';
import * as m0350 from './0350_site_score_days.ts';
import * as m0360 from './0360_page_current_scores.ts';
import * as m0380 from './0380_page_heatmap_hours.ts';
import * as m0400 from './0400_score_answer_versions.ts';
import * as m0410 from './0410_journey_steps.ts';
import * as m0430 from './0430_page_issue_list_index.ts';
import * as m0440 from './0440_delivery_claims.ts';
import * as m0450 from './0450_embedded_chunks.ts';

/** Every migration, in order. Static so the same code runs everywhere; a test checks it against the folder. */
export const migrations: Record<string, Migration> = {
  '0001_create_core': m0001,
  '0002_create_ux_issues': m0002,
  '0003_create_accounts': m0003,
  '0004_create_management': m0004,
  '0005_create_audit_log': m0005,
  '0006_outbox_retries': m0006,
  '0010_sessions_and_email_ownership': m0010,
  '0050_create_deploys': m0050,
  '0060_create_deliveries': m0060,
  '0070_create_page_screenshots': m0070,
  '0080_outbox_commands': m0080,
  '0100_environment_scoped_results': m0100,
  '0110_page_elements_write_cost': m0110,
  '0120_issue_signalling_again': m0120,
  '0121_verification_control': m0121,
  '0130_sessions_recent_first': m0130,
  '0160_screenshot_source_url': m0160,
  '0170_password_resets': m0170,
  '0171_privacy_erasures': m0171,
  '0172_site_retention': m0172,
  '0180_dead_letter_replay': m0180,
  '0181_retire_commands_stream': m0181,
  '0182_delivery_order': m0182,
  '0220_explore_session_rollup': m0220,
  '0221_score_history_site_days': m0221,
  '0222_page_viewers': m0222,
  '0250_partition_leases': m0250,
  '0260_heatmap_indexes': m0260,
  '0261_journeys_recent_sessions': m0261,
  '0270_alert_page_rollups': m0270,
  '0280_explore_session_keys': m0280,
  '0281_insights_indexes': m0281,
  '0282_explore_page_buckets': m0282,
  '0290_demo_deferred_indexes': m0290,
  '0300_alert_rollups_linear': m0300,
  '0310_explore_event_type_keys': m0310,
  '0311_page_weighted_signals': m0311,
  '0320_issue_list_indexes': m0320,
  '0330_page_reads_indexes': m0330,
  '0350_site_score_days': m0350,
  '0360_page_current_scores': m0360,
  '0380_page_heatmap_hours': m0380,
  '0400_score_answer_versions': m0400,
  '0410_journey_steps': m0410,
  '0430_page_issue_list_index': m0430,
  '0440_delivery_claims': m0440,
  '0450_embedded_chunks': m0450,
};
