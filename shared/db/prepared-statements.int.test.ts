import test from 'ava';
import { sql } from 'kysely';
import pg from 'pg';
import { pgBulkTransactions, type RunBulkTransaction } from './bulk.ts';
import { createTestDatabase } from '../testing/database.ts';

/**
 * The processor's transactions run named statements (bulk.ts): prepared on a connection the second time their text
 * comes, planned per run, and bounded per connection however many texts pass.
 */

async function withBulk(
  t: { teardown(fn: () => Promise<void>): void },
  opts?: { preparedStatements?: boolean },
): Promise<RunBulkTransaction> {
  const database = await createTestDatabase('prepared');
  // One connection: every transaction below runs on the same server session, whose statements are counted.
  const pool = new pg.Pool({ connectionString: database.url, max: 1 });
  // An idle client the server ends (the database dropped under it) is an 'error' event on the pool: without a
  // listener it would be an uncaught exception in the worker, as in the service's own pools (shared/db/connection.ts).
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  t.teardown(async () => {
    await pool.end();
    await database.drop();
  });
  return pgBulkTransactions(pool, opts);
}

const preparedNames = (bulk: RunBulkTransaction) =>
  bulk(async ({ trx }) =>
    (
      await sql<{ name: string }>`select name from pg_prepared_statements where name like 'friction_%'`.execute(trx)
    ).rows.map((r) => r.name),
  );

test("a statement that comes again is prepared once per connection and answers as before, planned with each run's values", async (t) => {
  const bulk = await withBulk(t);
  const answers: number[] = [];
  for (let i = 0; i < 8; i++) {
    answers.push(
      await bulk(async ({ trx }) => (await sql<{ n: number }>`select ${i}::int * 2 as n`.execute(trx)).rows[0].n),
    );
  }
  t.deepEqual(answers, [0, 2, 4, 6, 8, 10, 12, 14]);
  const names = await preparedNames(bulk);
  t.true(names.length >= 1, 'the repeated select (and begin/commit) are prepared');
  t.is(new Set(names).size, names.length);
  const mode = await bulk(
    async ({ trx }) =>
      (await sql<{ plan_cache_mode: string }>`show plan_cache_mode`.execute(trx)).rows[0].plan_cache_mode,
  );
  t.is(mode, 'force_custom_plan');
});

test('texts that never repeat are not prepared, and however many texts come a connection holds at most 64', async (t) => {
  const bulk = await withBulk(t);
  await bulk(async ({ trx }) => {
    for (let i = 0; i < 300; i++) await sql.raw(`select ${i} as once_${i}`).execute(trx);
  });
  // At most begin and commit came again (the texts seen once are forgotten past a bound, so even they may not be).
  t.true((await preparedNames(bulk)).length <= 2, 'no select that came once is prepared');
  for (let round = 0; round < 2; round++) {
    await bulk(async ({ trx }) => {
      for (let i = 0; i < 200; i++) await sql.raw(`select ${i} as twice_${i}`).execute(trx);
    });
  }
  const names = await preparedNames(bulk);
  t.is(names.length, 64);
  // Past the bound, statements still run (unnamed).
  t.is(
    await bulk(
      async ({ trx }) => (await sql<{ twice_199: number }>`select 199 as twice_199`.execute(trx)).rows[0].twice_199,
    ),
    199,
  );
});

test('DATABASE_PREPARED_STATEMENTS=false: nothing is prepared (a PgBouncer in transaction mode)', async (t) => {
  const bulk = await withBulk(t, { preparedStatements: false });
  for (let i = 0; i < 5; i++) await bulk(async ({ trx }) => sql`select ${i}::int as n`.execute(trx));
  t.deepEqual(await preparedNames(bulk), []);
});
