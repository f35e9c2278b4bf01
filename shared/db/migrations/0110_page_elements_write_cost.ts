import { sql, type Kysely } from 'kysely';

/**
 * The processor rewrites a row of `page_elements` for every element a batch touches, so what each row write costs
 * is paid per signal. Measured on the SDK-shaped backlog (EXPLAIN ANALYZE of the processor's own statements):
 * - `page_elements_rank_idx` (site, environment, friction_score) serves no query: the elements route orders by
 *   signal count first and reads through the primary key's (site, environment, page) prefix. Every insert paid an
 *   entry in it, and because friction_score changes on every rewrite, no update could be HOT.
 * - The foreign key to `sites` ran a trigger per inserted row (a locked lookup of the site, about a fifth of the
 *   insert's time). Like page_scores and score_history, which never had one, the rows are derived from stored
 *   events and rewritten in place; sites are only soft-deleted (`deleted_at`), so the cascade never ran.
 * - fillfactor 70 leaves room on each heap page, so the rewrite of an element lands on its own page (HOT: no index
 *   entry at all) instead of moving.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists page_elements_rank_idx`.execute(db);
  await sql`alter table page_elements drop constraint if exists page_elements_site_id_fkey`.execute(db);
  await sql`alter table page_elements set (fillfactor = 70)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table page_elements reset (fillfactor)`.execute(db);
  await sql`alter table page_elements add constraint page_elements_site_id_fkey foreign key (site_id) references sites(id) on delete cascade`.execute(
    db,
  );
  await sql`create index page_elements_rank_idx on page_elements (site_id, environment, friction_score desc)`.execute(
    db,
  );
}
