import { createHash } from 'node:crypto';
import { sql, type PostgresPool, type PostgresPoolClient } from 'kysely';
import type pg from 'pg';

/**
 * The comment a statement starts with to run as a named (prepared) statement on PostgreSQL (preparedReads). For the
 * few large reads a route repeats on every call: planned each call, the page view's one statement cost 12-15 ms of
 * server CPU at 10M demo events (its subqueries' planning, and on this machine the page faults of the planner's
 * memory), 2.2 ms with its plan kept (docs/query-performance.md). Other statements, and the embedded database, ignore it.
 */
export const PREPARED = sql.raw('/* prepared */');
const MARK = '/* prepared */';

/** Statement names by text: marked texts are a few fixed shapes, so the map stays small; past the bound they run unnamed. */
const MAX_NAMED = 64;
const names = new Map<string, string>();

function nameOf(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED) {
    name = `friction_read_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    names.set(text, name);
  }
  return name;
}

/**
 * `pool` as kysely's pool, running each statement marked PREPARED as a named statement: node-postgres parses it once
 * per connection, and PostgreSQL keeps its plan (a generic one, after five runs, where its cost is no worse than the
 * values' own plans: `plan_cache_mode` auto). A connection the processor's bulk transactions used plans each run
 * (bulk.ts sets force_custom_plan there) and still skips the parse. Unmarked statements run as before, and so does
 * every statement when `enabled` is false (DATABASE_PREPARED_STATEMENTS=false: a PgBouncer in transaction mode older
 * than 1.21 would send a named statement to a server connection that never prepared it).
 */
export function preparedReads(pool: pg.Pool, enabled = true): PostgresPool {
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => ({
    // kysely reads the backend's pid from the client to cancel a statement.
    get processID() {
      return (client as unknown as { processID?: number }).processID;
    },
    query: ((text: unknown, values?: unknown[]) => {
      const name = enabled && typeof text === 'string' && text.startsWith(MARK) ? nameOf(text) : undefined;
      return name === undefined
        ? client.query(text as string, values)
        : client.query({ name, text: text as string, values });
    }) as unknown as PostgresPoolClient['query'],
    release: (destroy?: boolean) => client.release(destroy),
  });
  return {
    // The client class kysely opens a control connection with, to cancel a statement (node-postgres' pool has it).
    Client: (pool as unknown as Pick<PostgresPool, 'Client'>).Client,
    options: pool.options,
    async connect() {
      const client = await pool.connect();
      let c = wrapped.get(client);
      if (c === undefined) wrapped.set(client, (c = wrap(client)));
      return c;
    },
    end: () => pool.end(),
  };
}
