/**
 * Secondary indexes deferred while `friction demo --events` COPYs into empty tables: maintaining them row by row was
 * most of the server's work (1M events: 84 s of COPY with them, 45 s without, load average 23; 42 s of backend CPU
 * against 16 s), and building one from the finished table is a sort. Only on the PostgreSQL server and only when
 * every table the generator writes is empty (a new database: nothing reads them meanwhile); the definitions are
 * kept in `demo_deferred_indexes` (migration 0290) until each index exists again, so a run killed halfway leaves
 * them for the next run to build. Constraint indexes (primary keys) stay: they check what is written.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../shared/db/database.ts';

const TABLES = [
  'events',
  'signals',
  'sessions',
  'explore_session_state',
  'page_viewers',
  'explore_session_keys',
  'explore_page_buckets',
];

/** Memory of each index build (a sort): a session setting, so nothing else on the server changes. */
const BUILD_MEMORY = '256MB';
/** Index builds at once, each on its own connection (builds on one table share its lock). */
const BUILDS_AT_ONCE = 4;

/**
 * Drops the secondary indexes of the generator's tables when they are all empty, keeping their definitions.
 * Returns how many were deferred (0: the tables hold rows, the indexes stay).
 */
export async function deferIndexes(db: Kysely<Database>): Promise<number> {
  return db.transaction().execute(async (trx) => {
    for (const t of TABLES) {
      const { rows } = await sql<{ any: boolean }>`select exists (select 1 from ${sql.table(t)}) as any`.execute(trx);
      if (rows[0].any) return 0;
    }
    const { rows } = await sql<{ name: string; definition: string }>`
      select i.indexname as name, i.indexdef as definition from pg_indexes i
      where i.schemaname = current_schema() and i.tablename in (${sql.join(TABLES)})
        and not exists (select 1 from pg_constraint c where c.conname = i.indexname and c.conrelid = (quote_ident(i.tablename))::regclass)`.execute(
      trx,
    );
    for (const r of rows) {
      await sql`insert into demo_deferred_indexes (name, definition) values (${r.name}, ${r.definition})
                on conflict (name) do nothing`.execute(trx);
      await sql`drop index ${sql.id(r.name)}`.execute(trx);
    }
    return rows.length;
  });
}

/** Builds every deferred index again (a few at a time); returns how many. */
export async function restoreIndexes(db: Kysely<Database>): Promise<number> {
  const { rows } = await sql<{ name: string; definition: string }>`
    select name, definition from demo_deferred_indexes order by name`.execute(db);
  // The largest table's indexes first: they take longest.
  const queue = [...rows].sort(
    (a, b) => Number(b.definition.includes(' ON public.events ')) - Number(a.definition.includes(' ON public.events ')),
  );
  const worker = async () => {
    for (let r = queue.shift(); r !== undefined; r = queue.shift()) {
      const { name, definition } = r;
      await db.connection().execute(async (c) => {
        await sql`set maintenance_work_mem = ${sql.lit(BUILD_MEMORY)}`.execute(c);
        await c.transaction().execute(async (trx) => {
          // The definition is the server's own (pg_get_indexdef), read back from the table it was kept in.
          await sql.raw(definition.replace(/^CREATE (UNIQUE )?INDEX /, 'CREATE $1INDEX IF NOT EXISTS ')).execute(trx);
          await sql`delete from demo_deferred_indexes where name = ${name}`.execute(trx);
        });
        await sql`reset maintenance_work_mem`.execute(c);
      });
    }
  };
  await Promise.all(Array.from({ length: BUILDS_AT_ONCE }, worker));
  return rows.length;
}
