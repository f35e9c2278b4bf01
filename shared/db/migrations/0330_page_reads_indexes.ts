import { sql, type Kysely } from 'kysely';

/**
 * Indexes of the page, elements and element heatmap reads at 10M events (issue 25).
 *
 * `elements_by_signal_count_idx`: the elements list (api/read-models/elements.queries.ts) in its order, so a site's
 * first 50 are read from the index and the scan stops there; before, every element of the site (11,163 at 10M) was
 * read from the table and sorted by count, score, page and selector for each request.
 *
 * `element_heatmap_clicks_idx` replaces `element_heatmap_recent_idx` (migration 0260): the same key and columns, but
 * only the three clicking signal types the element heatmap draws (api/routes/heatmaps/heatmaps.queries.ts), so its
 * 800 newest are the first 800 entries instead of the first 800 that pass a filter on the type (1,092 entries read
 * for the bench's element at 10M). No other read used the old index; the signals table keeps the same number of
 * indexes to maintain.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index if not exists elements_by_signal_count_idx on page_elements
    (site_id, environment, signal_count desc, friction_score desc, page, cluster_selector)`.execute(db);
  await sql`create index if not exists element_heatmap_clicks_idx on signals (site_id, environment, page, selector, ts desc)
    include (signal_type, x, y)
    where signal_type in ('rage_click', 'dead_click', 'disabled_element_attempt') and x is not null and y is not null`.execute(
    db,
  );
  await sql`drop index if exists element_heatmap_recent_idx`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`create index if not exists element_heatmap_recent_idx on signals (site_id, environment, page, selector, ts desc)
    include (signal_type, x, y) where x is not null and y is not null`.execute(db);
  await sql`drop index if exists element_heatmap_clicks_idx`.execute(db);
  await sql`drop index if exists elements_by_signal_count_idx`.execute(db);
}
