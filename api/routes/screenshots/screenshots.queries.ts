import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { liveSites } from '../../../shared/db/queries/sites.queries.ts';

export interface StoredScreenshot {
  page: string;
  device: string;
  width: number;
  height: number;
  failure: string | null;
  captured_at: Date;
  /** The site URL the capture was taken from, and the site's URL now (a failure is retried once they differ). */
  source_url: string | null;
  site_url: string | null;
}

/** Which capture: a site's page on one device (a page has one capture per device). */
export interface ScreenshotKey {
  site_id: string;
  page: string;
  device: string;
}

/** `k`'s capture: the (site_id, page, device) primary key of `page_screenshots`. */
const captureOf = (k: ScreenshotKey) => (eb: ExpressionBuilder<Database, 'page_screenshots'>) =>
  eb.and([
    eb('page_screenshots.site_id', '=', k.site_id),
    eb('page_screenshots.page', '=', k.page),
    eb('page_screenshots.device', '=', k.device),
  ]);

/** The stored capture (or failure) of a page on one device, without its image, with the site's current URL. */
export async function storedScreenshot(db: Kysely<Database>, k: ScreenshotKey): Promise<StoredScreenshot | undefined> {
  return db
    .selectFrom('page_screenshots')
    .leftJoin('sites', 'sites.id', 'page_screenshots.site_id')
    .select([
      'page_screenshots.page',
      'page_screenshots.device',
      'page_screenshots.width',
      'page_screenshots.height',
      'page_screenshots.failure',
      'page_screenshots.captured_at',
      'page_screenshots.source_url',
      'sites.url as site_url',
    ])
    .where(captureOf(k))
    .executeTakeFirst();
}

/** The PNG of a successful capture. */
export async function screenshotPng(db: Kysely<Database>, k: ScreenshotKey): Promise<Buffer | undefined> {
  const row = await db
    .selectFrom('page_screenshots')
    .select('png')
    .where(captureOf(k))
    .where('png', 'is not', null)
    .executeTakeFirst();
  const png = row?.png;
  // pg answers a Buffer, PGlite a plain Uint8Array (which Koa would send as JSON): one form for the route.
  return png ? (Buffer.isBuffer(png) ? png : Buffer.from(png.buffer, png.byteOffset, png.byteLength)) : undefined;
}

/** The site's stored URL, the origin pages are captured from. */
export async function siteUrl(db: Kysely<Database>, siteId: string): Promise<string | undefined> {
  return (await liveSites(db).select('url').where('id', '=', siteId).executeTakeFirst())?.url;
}

/**
 * Takes one capture from the site's quota of `day` (a UTC date), atomically: false when `limit` are used.
 * One statement, so concurrent API processes cannot both take the last one.
 */
export async function takeQuota(db: Kysely<Database>, siteId: string, day: string, limit: number): Promise<boolean> {
  const r = await sql<{ used: number }>`
    insert into screenshot_quota (site_id, day, used) values (${siteId}, ${day}::date, 1)
    on conflict (site_id, day) do update set used = screenshot_quota.used + 1 where screenshot_quota.used < ${limit}
    returning used`.execute(db);
  return r.rows.length > 0;
}

export interface CaptureResult {
  width: number;
  height: number;
  png: Buffer | null;
  failure: string | null;
  captured_at: Date;
  source_url: string;
}

/** Stores the latest capture (or failure) of a page on a device, replacing the previous one. */
export async function saveScreenshot(db: Kysely<Database>, k: ScreenshotKey, r: CaptureResult): Promise<void> {
  await db
    .insertInto('page_screenshots')
    .values({ site_id: k.site_id, page: k.page, device: k.device, ...r })
    .onConflict((oc) =>
      oc.columns(['site_id', 'page', 'device']).doUpdateSet({
        width: r.width,
        height: r.height,
        png: r.png,
        failure: r.failure,
        captured_at: r.captured_at,
        source_url: r.source_url,
      }),
    )
    .execute();
}
