import { ValidationError } from '../../../shared/errors.ts';
import type { z } from 'zod';
import type { ReadDeps } from '../../http/deps.ts';
import type { RouteTable } from '../../http/routes.ts';
import { rawRows, tableColumns } from './raw.queries.ts';
import { RawQuerySchema, RawResponseSchema, type RawTable } from './raw.schema.ts';

/** What `sort` defaults to: each table's time column, so the default answer is the newest rows. */
const DEFAULT_SORT: Record<RawTable, string> = {
  events: 'ts',
  signals: 'ts',
  sessions: 'last_seen_at',
  page_scores: 'window_start',
  score_history: 'day',
  ux_issues: 'updated_at',
  alerts: 'triggered_at',
  deploys: 'recorded_at',
};

/** `GET /v1/query/raw` and the short form `/v1/raw`: a site's rows of one table, as stored. */
export function rawRoutes(table: RouteTable, deps: ReadDeps): RouteTable {
  return table.read({
    path: '/v1/query/raw',
    shortForm: "A site's rows of one table (short form)",
    tag: 'raw',
    summary: "A site's rows of one table, as stored",
    description:
      "Rows of one environment (default production; events and sessions without one are production's); table=alerts has production's only, so environment=staging lists none there.",
    query: RawQuerySchema,
    response: RawResponseSchema,
    async handler(_ctx, { query: q }) {
      const sort = q.sort ?? DEFAULT_SORT[q.table];
      const columns = await tableColumns(deps.db, q.table);
      if (!columns.includes(sort)) {
        throw new ValidationError(`invalid query: sort: ${q.table} has no column ${sort}`, [
          { path: 'sort', message: `must be a column of ${q.table}: ${columns.join(', ')}` },
        ]);
      }
      const scoped = columns.includes('environment');
      // A table without an environment column holds production's rows only (alerts: rules watch production).
      const rows =
        !scoped && q.environment !== 'production'
          ? []
          : await rawRows(deps.db, {
              table: q.table,
              siteId: q.site_id,
              environment: scoped ? q.environment : null,
              sort,
              order: q.order,
              limit: q.limit,
            });
      return { site_id: q.site_id, table: q.table, sort, order: q.order, limit: q.limit, rows } satisfies z.output<
        typeof RawResponseSchema
      >;
    },
  });
}
