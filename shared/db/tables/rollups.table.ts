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
 * Per site and session, each distinct page it had an event on (kind 'page') and each signal type it met (kind
 * 'signal'): migration 0280; the Explorer's page and signal filters and groups.
 */
export interface ExploreSessionKeyTable {
  site_id: string;
  session_id: string;
  kind: 'page' | 'signal';
  key: string;
}
