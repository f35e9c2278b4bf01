import type { Timestamp } from './columns.ts';

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

/**
 * The Explorer's session sums per (site, environment, day or hour a session started, page it had an event on, flags)
 * (migration 0282): each session counts once on each of its pages, with its whole-session page views and dwell.
 */
export interface ExplorePageBucketTable {
  site_id: string;
  environment: string;
  /** 'day' or 'hour': the length of `bucket`. */
  grain: string;
  bucket: Timestamp;
  page: string;
  confused: boolean;
  converted: boolean;
  sessions: number;
  page_views: number;
  /** How many of the sessions bounced (fewer than two page views). */
  bounced: number;
  dwell_ms: number;
}
