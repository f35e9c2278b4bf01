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
