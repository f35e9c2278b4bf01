import { sql, type Kysely } from 'kysely';

/**
 * Frozen: the site URL a page screenshot (or its failure) was taken from. A failure is otherwise answered for an
 * hour before a retry; once the site's URL has changed (the usual fix for a failure) the next request retries at
 * once. Null for rows from before: treated as taken from another URL, so they are retried once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table page_screenshots add column source_url text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table page_screenshots drop column source_url`.execute(db);
}
