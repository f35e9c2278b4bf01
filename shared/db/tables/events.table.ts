import type { Generated } from 'kysely';
import type { Timestamp, Json } from './columns.ts';

// Stored events, their signals and sessions (the ingest hot path, written by COPY).

/** The element an event or signal concerns and where (page and viewport coordinates): columns of both tables. */
interface ElementColumns {
  selector: string | null;
  label: string | null;
  x: number | null;
  y: number | null;
  vx: number | null;
  vy: number | null;
  px: number | null;
  py: number | null;
}

export interface EventTable extends ElementColumns {
  site_id: string;
  id: string;
  ts: Timestamp;
  received_at: Timestamp;
  session_id: string;
  type: string;
  page: string;
  signal: string | null;
  name: string | null;
  value: number | null;
  meta: Json | null;
  device: string;
  source: string | null;
  app_version: string | null;
  environment: string | null;
}

export interface SignalTable extends ElementColumns {
  site_id: string;
  /** 'production' or 'staging' (migration 0100). */
  environment: Generated<'production' | 'staging'>;
  event_id: string;
  ts: Timestamp;
  session_id: string;
  page: string;
  signal_type: string;
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
