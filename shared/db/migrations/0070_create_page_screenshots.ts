import { sql, type Kysely } from 'kysely';

/**
 * Frozen: page screenshots (`/query/page-screenshot`).
 * - `page_screenshots`: the latest capture per (site, page, device). A failed capture keeps its row with `png`
 *   null and `failure` set (`refused` or `render_failed`), so the route can say why without retrying at once.
 * - `screenshot_quota`: captures started per site and UTC day, the SCREENSHOTS_PER_SITE_PER_DAY limit.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table page_screenshots (
      site_id uuid not null references sites(id) on delete cascade,
      page text not null,
      device text not null,
      width integer not null,
      height integer not null,
      png bytea,
      failure text,
      captured_at timestamptz not null,
      primary key (site_id, page, device)
    )`.execute(db);
  await sql`
    create table screenshot_quota (
      site_id uuid not null references sites(id) on delete cascade,
      day date not null,
      used integer not null,
      primary key (site_id, day)
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table screenshot_quota`.execute(db);
  await sql`drop table page_screenshots`.execute(db);
}
