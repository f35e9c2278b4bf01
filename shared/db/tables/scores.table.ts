import type { ColumnType, Generated } from 'kysely';
import type { Timestamp, Json } from './columns.ts';

// Page scores, their daily history and element aggregates (written by the processor).

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

/**
 * Each page's latest `page_scores` row (migration 0360): kept by a row trigger on page_scores, read by the current
 * scores (api/read-models/scores.queries.ts) with the 7-day window still applied on `window_start`.
 */
export interface PageCurrentScoreTable {
  site_id: string;
  environment: 'production' | 'staging';
  page: string;
  window_start: Timestamp;
  score: number;
  sessions: number;
  dominant_signal: string | null;
  trend: string;
  updated_at: Timestamp;
}

/**
 * Per site, environment and day, the sums behind the site's daily score over `score_history`'s pages with sessions
 * (migration 0350; shared/db/site-score-days.ts keeps it): the score is `weighted_sum / sessions`.
 */
export interface SiteScoreDayTable {
  site_id: string;
  environment: 'production' | 'staging';
  day: ColumnType<string, string, string>;
  /** Sum of `score * sessions` (float8). */
  weighted_sum: number;
  /** Sum of `sessions` (bigint, read as a number like every int8 here); 0 for a day no page has sessions any more. */
  sessions: number;
}

/**
 * The scores answer's version per site and environment (migration 0400): a new value from one sequence whenever a
 * transaction writes `page_current_scores` or `site_score_days` rows of the key (row triggers; `xact` is the writing
 * transaction, so it is bumped once per transaction). Read by the API's answer cache (api/read-models/
 * scores-answer-cache.ts).
 */
export interface ScoreAnswerVersionTable {
  site_id: string;
  environment: string;
  /** bigint (read as a number, like every int8 here). */
  version: number;
  /** The writing transaction's id (`pg_current_xact_id()`, bigint). */
  xact: number;
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
