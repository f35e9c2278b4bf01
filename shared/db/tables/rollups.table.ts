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
