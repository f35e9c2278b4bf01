import type { Timestamp } from './columns.ts';

/** Per site, environment, page and session: its last view of the page (migration 0222; the page route's 7-day viewers). */
export interface PageViewerTable {
  site_id: string;
  /** 'production' or 'staging'. */
  environment: string;
  page: string;
  session_id: string;
  last_view_at: Timestamp;
}

/**
 * Per site, environment, page and session, the time of the session's last weighted signal on the page: migration 0311;
 * revenue's and recommendations' calm viewers.
 */
export interface PageWeightedSignalTable {
  site_id: string;
  /** 'production' or 'staging'. */
  environment: string;
  page: string;
  session_id: string;
  last_signal_at: Timestamp;
}

/**
 * Per site, environment, page, UTC hour and device, how many of the page's signals with viewport coordinates (`vx`,
 * `vy`) fell in the hour: migration 0380; the page heatmap's total and the hour of each pick.
 */
export interface PageHeatmapHourTable {
  site_id: string;
  /** 'production' or 'staging'. */
  environment: string;
  page: string;
  /** The hour's start (UTC). */
  hour: Timestamp;
  /** As `signals.device`. */
  device: string;
  signals: number;
}

/**
 * Per site and session, each distinct page it had an event on (kind 'page'), each signal type it met (kind
 * 'signal') and each event type it had (kind 'type'): migrations 0280 and 0310; the Explorer's page, signal, event
 * type and confused filters and its page and signal groups.
 */
export interface ExploreSessionKeyTable {
  site_id: string;
  session_id: string;
  kind: 'page' | 'signal' | 'type';
  key: string;
}

/**
 * Per site, environment and session, page views and edge-decorator signals (migration 0410; the journeys route): one
 * row per session and processor batch (or per session where the rows were rebuilt from `events`), appended, never
 * rewritten but by retention. Times are epoch microseconds (bigint: strings in the drivers); the signal arrays are
 * parallel (one element per signal), as are the view arrays.
 */
export interface JourneyStepTable {
  site_id: string;
  /** 'production' or 'staging'. */
  environment: string;
  session_id: string;
  /** The row's earliest and latest step. */
  first_at: Timestamp;
  last_at: Timestamp;
  view_at: string[];
  view_page: string[];
  signal_at: string[];
  signal_page: string[];
  signal_type: string[];
  signal_selector: (string | null)[];
  /** `meta.confidence` when the event had a numeric one. */
  signal_confidence: (number | null)[];
}
