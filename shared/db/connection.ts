import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './database.ts';
import { pglitePool } from './pglite-pool.ts';
import { PGliteThread } from './pglite-thread.ts';
import { lockDataDirectory } from './embedded-lock.ts';
import { pgBulkTransactions, plainBulkTransactions, type RunBulkTransaction } from './bulk.ts';
import { preparedReads } from './prepared-reads.ts';

// int8 (counts, bigserial) as JS numbers: our counts stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));
// date columns as 'YYYY-MM-DD' strings, not local-midnight Dates.
pg.types.setTypeParser(1082, (v) => v);

export interface DatabaseHandle {
  db: Kysely<Database>;
  kind: 'postgres' | 'pglite';
  /** Transactions for the processor's bulk writes (COPY on PostgreSQL). */
  bulk: RunBulkTransaction;
  close(): Promise<void>;
  /**
   * Embedded only: resolves when the database thread ended without close() (it crashed). Its queries then fail with
   * a retriable connection error; the process should report it and exit rather than serve 503s forever.
   */
  lost?: Promise<Error>;
}

/**
 * Opens the database: PostgreSQL/TimescaleDB at `url`, or, when url is unset, the embedded PGlite with the
 * TimescaleDB extension, stored under `dataDir/db` (`memory://` keeps it in memory, for tests).
 */
export async function openDatabase(opts: {
  url?: string;
  dataDir: string;
  poolSize?: number;
  embeddedPath?: string;
  /** Embedded, new database only: start it as a copy of this dump (PGliteThread.dump) instead of empty. */
  embeddedSeed?: string;
  /** Pool checkout wait before failing (an unreachable server fails fast instead of hanging the caller). */
  connectTimeoutMs?: number;
  /** Server-side statement_timeout per connection; 0 disables. */
  statementTimeoutMs?: number;
  /**
   * The processor's transactions, and the API's reads marked PREPARED, run named (prepared) statements
   * (DATABASE_PREPARED_STATEMENTS; default true).
   */
  preparedStatements?: boolean;
}): Promise<DatabaseHandle> {
  if (opts.url) {
    const statementTimeout = opts.statementTimeoutMs ?? 60_000;
    const pool = new pg.Pool({
      connectionString: opts.url,
      max: opts.poolSize ?? 10,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
      // A half-open socket (server host gone without a FIN) is noticed instead of waited on forever.
      keepAlive: true,
      ...(statementTimeout > 0
        ? { statement_timeout: statementTimeout, idle_in_transaction_session_timeout: statementTimeout * 2 }
        : {}),
    });
    // An idle connection the server closed (restart, failover, admin kill) is dropped by the pool and replaced on
    // the next checkout; without a listener node-postgres would crash the process on it.
    pool.on('error', () => {});
    // The same for a checked-out connection between two statements of a transaction (pg-pool only listens on idle
    // ones): the next statement fails with the connection error, which callers handle; the event alone would crash.
    pool.on('connect', (client) => client.on('error', () => {}));
    const db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: preparedReads(pool, opts.preparedStatements ?? true) }),
    });
    return {
      db,
      kind: 'postgres',
      bulk: pgBulkTransactions(pool, { preparedStatements: opts.preparedStatements }),
      close: () => db.destroy(),
    };
  }
  let path = opts.embeddedPath;
  let release = () => {};
  if (!path) {
    path = join(opts.dataDir, 'db');
    mkdirSync(path, { recursive: true });
    release = lockDataDirectory(opts.dataDir);
  }
  // In its own thread: the WebAssembly database's CPU stays off the thread that answers HTTP and folds batches.
  const lite = await PGliteThread.open(path, opts.embeddedSeed).catch((err: unknown) => {
    release();
    throw err;
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: pglitePool(lite) }) });
  const close = async () => {
    try {
      await db.destroy();
    } finally {
      release();
    }
  };
  return { db, kind: 'pglite', bulk: plainBulkTransactions(db), close, lost: lite.lost };
}
