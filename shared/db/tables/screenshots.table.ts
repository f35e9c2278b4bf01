import type { ColumnType } from 'kysely';
import type { Timestamp } from './columns.ts';

// Page screenshots and their daily quota.

/** The latest capture of a page on one device; a failed one has `png` null and `failure` set. */
export interface PageScreenshotTable {
  site_id: string;
  page: string;
  device: string;
  width: number;
  height: number;
  /** pg reads a Buffer, PGlite a Uint8Array. */
  png: Uint8Array | null;
  failure: string | null;
  captured_at: Timestamp;
  /** The site URL the capture was taken from (null before migration 0160). */
  source_url: string | null;
}

/** Captures started per site and UTC day. */
export interface ScreenshotQuotaTable {
  site_id: string;
  day: ColumnType<string, string, string>;
  used: number;
}
