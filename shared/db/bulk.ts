import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Kysely, PostgresDialect, type PostgresPoolClient, type Transaction } from 'kysely';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Database } from './database.ts';

/**
 * `COPY ... FROM STDIN` into a table. COPY has no ON CONFLICT, but it stores rows about 1.4× faster than the best
 * multi-row insert on this machine, and a conflict only happens when a batch is redelivered after a crash: then
 * the transaction runs again without COPY (see copyWriter).
 */
export interface CopyWriter {
  copyRows(table: string, columns: readonly string[], rows: CopyRows): Promise<void>;
}

/** A transaction for bulk writes: kysely for every statement, plus COPY where the database connection offers it. */
export interface BulkTransaction {
  trx: Transaction<Database>;
  /**
   * Absent on the embedded PGlite, whose adapter has no COPY protocol, and on the second run of a transaction whose
   * COPY met stored rows: callers then use `INSERT ... ON CONFLICT DO NOTHING`.
   */
  copy?: CopyWriter;
}

export type RunBulkTransaction = <T>(fn: (tx: BulkTransaction) => Promise<T>) => Promise<T>;

/**
 * Rows in COPY's text format: tab-separated fields, `\N` for null, backslash escapes for the characters the
 * format reserves. Far cheaper than node-postgres' per-element array escaping; encoded in ~64 KiB chunks as rows
 * arrive, so a 20k-row statement never holds one multi-megabyte string.
 */
export class CopyRows {
  private readonly chunks: Buffer[] = [];
  private pending = '';
  private rows = 0;

  get length(): number {
    return this.rows;
  }

  add(fields: readonly (string | number | null | undefined)[]): void {
    let line = '';
    for (let i = 0; i < fields.length; i++) {
      const v = fields[i];
      if (i > 0) line += '\t';
      line += v === null || v === undefined ? '\\N' : typeof v === 'number' ? String(v) : escapeCopyText(v);
    }
    this.pending += `${line}\n`;
    this.rows++;
    if (this.pending.length >= 65_536) this.flush();
  }

  toChunks(): Buffer[] {
    this.flush();
    return this.chunks;
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    this.chunks.push(Buffer.from(this.pending, 'utf8'));
    this.pending = '';
  }
}

const COPY_SPECIAL = /[\\\t\n\r]/;

export function escapeCopyText(s: string): string {
  if (!COPY_SPECIAL.test(s)) return s;
  return s.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

const UNIQUE_VIOLATION = '23505';

/** A COPY met a row already stored: the transaction is aborted, and runs again on the insert path. */
class CopyConflict extends Error {
  constructor(cause: unknown) {
    super('COPY met a row already stored', { cause });
  }
}

/**
 * COPY without a savepoint: a conflict (a redelivered batch, rare) aborts the whole transaction, which
 * `pgBulkTransactions` then runs again without COPY. A savepoint around each COPY would keep the transaction
 * usable, but its two extra round trips per COPY cost every transaction, where a conflict costs only the
 * redelivered one.
 */
function copyWriter(client: pg.PoolClient): CopyWriter {
  return {
    async copyRows(table, columns, rows) {
      if (rows.length === 0) return;
      try {
        await pipeline(
          Readable.from(rows.toChunks()),
          client.query(copyFrom(`copy ${table} (${columns.join(', ')}) from stdin`)),
        );
      } catch (err) {
        throw (err as { code?: string }).code === UNIQUE_VIOLATION ? new CopyConflict(err) : err;
      }
    },
  };
}

/**
 * Bulk transactions on a node-postgres pool: one checked-out client carries both kysely's statements (through a
 * throwaway Kysely bound to that client, so `trx` is a real kysely transaction) and the COPY streams.
 */
export function pgBulkTransactions(pool: pg.Pool, opts: { preparedStatements?: boolean } = {}): RunBulkTransaction {
  const prepare = opts.preparedStatements ?? true;
  return async (fn) => {
    const client = await pool.connect();
    try {
      const statements = prepare ? await preparedStatementsOf(client) : undefined;
      const bound: PostgresPoolClient = {
        query: ((text: string, values: unknown[]) =>
          client.query(
            statements ? statements.config(text, values) : { text, values },
          )) as unknown as PostgresPoolClient['query'],
        release() {
          /* the client goes back to the pool below, once the transaction ended */
        },
      };
      const db = new Kysely<Database>({
        dialect: new PostgresDialect({
          pool: { connect: async () => bound, end: async () => {}, options: pool.options },
        }),
      });
      const run = (copy: CopyWriter | undefined) => db.transaction().execute((trx) => fn({ trx, copy }));
      let out: Awaited<ReturnType<typeof fn>>;
      try {
        out = await run(copyWriter(client));
      } catch (err) {
        if (!(err instanceof CopyConflict)) throw err;
        // Rolled back: the same work again with the insert path, which skips stored rows and tells which were new.
        out = await run(undefined);
      }
      client.release();
      return out;
    } catch (err) {
      // A failed transaction may have left the connection unusable (server gone, protocol out of step): discard it.
      client.release(err as Error);
      throw err;
    }
  };
}

/** Named (prepared) statements one connection may hold: the processor's transaction uses about twenty texts. */
const MAX_PREPARED_PER_CONNECTION = 64;

/**
 * A connection's named statements. A processor transaction runs the same fifteen-odd statements every time; at a
 * steady rate its transactions are small, and PostgreSQL's parse, analysis and planning of each statement cost more
 * of its CPU than the rows did. A text seen a second time on a connection is prepared under a name derived from it
 * (node-postgres then skips Parse on later runs, and PostgreSQL reuses the statement and its plan cache). Texts that
 * vary (an `in (...)` list's length) would grow a connection's statements without bound: at most
 * MAX_PREPARED_PER_CONNECTION are named, the rest run unnamed as before.
 */
class PreparedStatements {
  private readonly seen = new Set<string>();
  private readonly named = new Map<string, string>();

  config(text: string, values: unknown[]): pg.QueryConfig {
    const name = this.named.get(text);
    if (name !== undefined) return { name, text, values };
    if (this.named.size < MAX_PREPARED_PER_CONNECTION) {
      if (this.seen.has(text)) {
        this.seen.delete(text);
        const n = `friction_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
        this.named.set(text, n);
        return { name: n, text, values };
      }
      // Bounded like the named ones: a connection remembers at most this many texts it saw once.
      if (this.seen.size >= MAX_PREPARED_PER_CONNECTION * 4) this.seen.clear();
      this.seen.add(text);
    }
    return { text, values };
  }
}

/**
 * One set per connection (a pool's client lives as long as its server connection, and so do its statements). A
 * connection's first bulk transaction sets `plan_cache_mode = force_custom_plan` on it: a named statement keeps its
 * parse and analysis but is planned with each run's values, as an unnamed one is. PostgreSQL's generic plan, which
 * it may otherwise pick after five runs, took the issue lookup's `unnest` of thousands of keys for 100 rows and cost
 * 3-4× the custom plan on a backlog's fetches. Unnamed statements (everything outside bulk transactions) are
 * planned per run whatever the setting.
 */
const preparedByClient = new WeakMap<pg.PoolClient, PreparedStatements>();
async function preparedStatementsOf(client: pg.PoolClient): Promise<PreparedStatements> {
  let p = preparedByClient.get(client);
  if (!p) {
    await client.query('set plan_cache_mode = force_custom_plan');
    preparedByClient.set(client, (p = new PreparedStatements()));
  }
  return p;
}

/** Bulk transactions without COPY (the embedded PGlite): kysely's transaction alone. */
export function plainBulkTransactions(db: Kysely<Database>): RunBulkTransaction {
  return (fn) => db.transaction().execute((trx) => fn({ trx }));
}
