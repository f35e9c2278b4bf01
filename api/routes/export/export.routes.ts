import type Koa from 'koa';
import { PassThrough } from 'node:stream';
import type { Logger } from '../../../shared/logger.ts';
import type { ReadDeps } from '../../http/deps.ts';
import type { RouteTable } from '../../http/routes.ts';
import { EXPORT_HEADER, presentExportRow } from './export.presenter.ts';
import { exportChunks } from './export.queries.ts';
import { ExportQuerySchema, type ExportQuery } from './export.schema.ts';

/**
 * `/v1/query/export/events.csv` and `/v1/export/events.csv`: the site's events as RFC 4180 CSV, streamed chunk by
 * chunk with backpressure (the next chunk is read only when the client has taken the last), so memory stays flat
 * whatever the size. Errors before the first byte answer in the envelope; a failure mid-stream aborts the response
 * (the client sees a truncated transfer, never a CSV that looks complete).
 */
export function exportRoutes(table: RouteTable, deps: ReadDeps & { log?: Logger }): RouteTable {
  return table.read({
    path: '/v1/query/export/events.csv',
    shortForm: 'Events as CSV (short form; the same file)',
    tag: 'export',
    summary: "The site's events as RFC 4180 CSV with a header row, oldest first, streamed",
    description:
      "Columns: id, ts, session_id, type, page, signal, name, selector, label, x, y, vx, vy, px, py (fractions 0..1), value, device, source, app_version, environment, meta (JSON). Text starting with = + - @ (or a tab or CR) is prefixed with '. Content-Disposition names the file.",
    query: ExportQuerySchema,
    contentType: 'text/csv',
    handler: (ctx, { query }) => streamCsv(ctx, deps, query),
  });
}

async function streamCsv(ctx: Koa.Context, deps: ReadDeps & { log?: Logger }, q: ExportQuery): Promise<void> {
  const range = { from: q.from, to: q.to ?? deps.now(), environment: q.environment };
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
