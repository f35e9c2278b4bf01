import { sql, type Kysely } from 'kysely';

/**
 * The two heatmap reads (api/routes/heatmaps/heatmaps.queries.ts) answered from an index alone. `signals_page_idx`
 * (site, page, ts) made the element heatmap walk every signal of the page, newest first, reading each row from the
 * table to test its selector, until 800 matched; and the page heatmap read every signal of the page over 30 days
 * from the table to number and sample them. `element_heatmap_recent_idx` gives the element's signals newest first
 * with the columns the heatmap shows; `page_heatmap_sample_idx` gives the page's signals in the sample's order
 * (ts, event_id) with the columns it returns. Both skip the rows without coordinates, which neither read uses.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index if not exists element_heatmap_recent_idx on signals (site_id, environment, page, selector, ts desc)
    include (signal_type, x, y) where x is not null and y is not null`.execute(db);
  await sql`create index if not exists page_heatmap_sample_idx on signals (site_id, environment, page, ts, event_id)
    include (signal_type, vx, vy, px, py, selector, device) where vx is not null and vy is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists element_heatmap_recent_idx`.execute(db);
  await sql`drop index if exists page_heatmap_sample_idx`.execute(db);
}
