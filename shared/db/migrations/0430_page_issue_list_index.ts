import { sql, type Kysely } from 'kysely';

/**
 * The page view's issues (api/read-models/issues.queries.ts `issuesOfPageText`: a page's active issues, most severe
 * first, then most sessions affected, then id, at most 100) read in their order from an index instead of every issue
 * of the page sorted (issue 25): the bench's `/checkout` at 10M demo events has 677 active issues, whose scan and
 * top-N sort were about 1.2 ms of the statement's 3.7-6.4; the first 100 entries of this index about 0.13 ms. Not
 * partial on the active statuses: the page view's statement is kept prepared, and a generic plan cannot prove a
 * partial index's predicate from the statuses it gets as parameters (the rows of other statuses are filtered).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index if not exists ux_issues_page_list_idx
    on ux_issues (site_id, environment, page, severity desc, affected_sessions desc, id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists ux_issues_page_list_idx`.execute(db);
}
