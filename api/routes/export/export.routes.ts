import Router from '@koa/router';
import type Koa from 'koa';
import type { Kysely } from 'kysely';
import { PassThrough } from 'node:stream';
import type { Database } from '../../../shared/db/database.ts';
import type { Logger } from '../../../shared/logger.ts';
import { siteQuery } from '../../http/auth.ts';
import { EXPORT_HEADER, presentExportRow } from './export.presenter.ts';
import { exportChunks } from './export.queries.ts';
import { ExportQuerySchema } from './export.schema.ts';

/**
 * `/v1/query/export/events.csv` and `/v1/export/events.csv`: the site's events as RFC 4180 CSV, streamed chunk by
 * chunk with backpressure (the next chunk is read only when the client has taken the last), so memory stays flat
 * whatever the size. Errors before the first byte answer in the envelope; a failure mid-stream aborts the response
 * (the client sees a truncated transfer, never a CSV that looks complete).
 */
export function exportRouter(deps: {
  db: Kysely<Database>;
  readAuth: Koa.Middleware;
  log?: Logger;
  now?: () => Date;
}): Router {
  const now = deps.now ?? (() => new Date());
  const router = new Router();
  const handler: Koa.Middleware = async (ctx) => {
    const q = siteQuery(ctx, ExportQuerySchema);
    const range = { from: q.from, to: q.to ?? now(), environment: q.environment };
    const chunks = exportChunks(deps.db, q.site_id, range);
    // The first chunk is read before answering, so a database error is still a clean 5xx in the envelope.
    const first = await chunks.next();
    const out = new PassThrough();
    ctx.status = 200;
    ctx.type = 'text/csv; charset=utf-8';
    ctx.attachment(`events-${q.site_id}-${range.to.toISOString().slice(0, 10)}.csv`);
    ctx.body = out;
    const pump = async () => {
      let more = out.write(EXPORT_HEADER);
      let next = first;
      while (!next.done) {
        for (const r of next.value) more = out.write(presentExportRow(r));
        if (!more) await drained(out);
        if (out.destroyed) {
          await chunks.return(undefined);
          return;
        }
        next = await chunks.next();
      }
      out.end();
    };
    pump().catch((err: unknown) => {
      deps.log?.error({ err, site_id: q.site_id }, 'events export failed mid-stream');
      out.destroy(err as Error);
    });
  };
  router.get('/v1/query/export/events.csv', deps.readAuth, handler);
  router.get('/v1/export/events.csv', deps.readAuth, handler);
  return router;
}

/** Resolves when the stream can take more, or has been closed (client gone). */
function drained(s: PassThrough): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      s.off('drain', done);
      s.off('close', done);
      resolve();
    };
    s.once('drain', done);
    s.once('close', done);
  });
}
