import type { ColumnType, Generated } from 'kysely';
import type { Timestamp, GeneratedTimestamp } from './columns.ts';

// Alert rules, the alerts they fire, and their flapping state.

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

/** Kept by a trigger on page_scores (migration 0270): each production page's first, latest and previous hour. */
export interface AlertPageMarkTable {
  site_id: string;
  page: string;
  first_start: Timestamp;
  latest_start: Timestamp;
  latest_score: number;
  latest_sessions: number;
  previous_start: Timestamp | null;
  previous_score: number | null;
  /** The anomaly baseline's samples: the latest hour's hour of the week, 1 to 8 weeks before it, oldest first. */
  week_scores: Generated<number[]>;
  week_sessions: Generated<number[]>;
}

/** Kept by a trigger on page_scores (migration 0270): a page's newest 9 rows of one hour of the week, newest first. */
export interface AlertPageWeekHourTable {
  site_id: string;
  page: string;
  /** Hours since the epoch, mod 168. */
  hour_of_week: number;
  starts: Timestamp[];
  scores: number[];
  sessions: number[];
}
