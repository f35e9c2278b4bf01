import Router from '@koa/router';
import type Koa from 'koa';
import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { ValidationError } from '../../../shared/errors.ts';
import { ok } from '../../../shared/http/envelope.ts';
import { siteQuery } from '../../http/auth.ts';
import { rawRows, tableColumns } from './raw.queries.ts';
import type { z } from 'zod';
import { RawQuerySchema, type RawResponseSchema, type RawTable } from './raw.schema.ts';

export interface RawDeps {
  db: Kysely<Database>;
  readAuth: Koa.Middleware;
}

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
export function rawRouter(deps: RawDeps): Router {
  const router = new Router();
  const handler: Koa.Middleware = async (ctx) => {
    const q = siteQuery(ctx, RawQuerySchema);
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
    ctx.body = ok({ site_id: q.site_id, table: q.table, sort, order: q.order, limit: q.limit, rows } satisfies z.output<
      typeof RawResponseSchema
    >);
  };
  router.get('/v1/query/raw', deps.readAuth, handler);
  router.get('/v1/raw', deps.readAuth, handler);
  return router;
}
