import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';

/** The subset of PGlite this adapter uses (typed loosely so the fork's types need not match exactly). */
export interface PGliteLike {
  query<R>(sql: string, params?: unknown[]): Promise<{ rows: R[]; affectedRows?: number }>;
  close(): Promise<void>;
}

/**
 * Presents one embedded PGlite instance as a node-postgres pool so kysely's PostgresDialect drives it.
 * PGlite is a single connection: a mutex hands it to one kysely connection at a time, so a
 * transaction's statements never interleave with another caller's.
 */
export function pglitePool(db: PGliteLike): PostgresPool {
  let tail: Promise<void> = Promise.resolve();
  const acquire = (): Promise<() => void> => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const ready = tail.then(() => release);
    tail = tail.then(() => held);
    return ready;
  };
  return {
    options: {},
    async connect(): Promise<PostgresPoolClient> {
      const release = await acquire();
      let released = false;
      const client = {
        async query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
          const res = await db.query<R>(sql, [...parameters]);
          const command = (/^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SELECT') as PostgresQueryResult<R>['command'];
          return { command, rowCount: res.affectedRows ?? res.rows.length, rows: res.rows };
        },
        release() {
          if (!released) {
            released = true;
            release();
          }
        },
      };
      return client as unknown as PostgresPoolClient;
    },
    async end() {
      await tail;
      await db.close();
    },
  };
}
