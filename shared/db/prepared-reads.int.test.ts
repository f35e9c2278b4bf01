import test from 'ava';
import { sql } from 'kysely';
import { openDatabase } from './connection.ts';
import { PREPARED } from './prepared-reads.ts';
import { createTestDatabase } from '../testing/database.ts';

/** The API pool runs a statement marked PREPARED as a named statement (prepared-reads.ts), and others unnamed. */
async function onePooledConnection(t: { teardown(fn: () => Promise<void>): void }, preparedStatements?: boolean) {
  const database = await createTestDatabase('prepared-reads', { empty: true });
  // One connection: every statement below runs in the same server session, whose prepared statements are listed.
  const handle = await openDatabase({ url: database.url, dataDir: '', poolSize: 1, preparedStatements });
  t.teardown(async () => {
    await handle.close();
    await database.drop();
  });
  return handle;
}

test('a statement marked PREPARED is prepared once per connection and answers with each call’s values; others are not', async (t) => {
  const handle = await onePooledConnection(t);
  const prepared = () =>
    sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(handle.db);
  const answers: number[] = [];
  for (let i = 0; i < 8; i++) {
    const { rows } = await sql<{ n: number }>`${PREPARED}select ${i}::int * 2 as n`.execute(handle.db);
    answers.push(rows[0].n);
    await sql`select ${i}::int as unmarked`.execute(handle.db);
  }
  t.deepEqual(answers, [0, 2, 4, 6, 8, 10, 12, 14]);
  const statements = (await prepared()).rows;
  t.is(statements.length, 1, 'one named statement: the marked text, prepared once');
  t.regex(statements[0].name, /^friction_read_[0-9a-f]{20}$/);
  t.true(statements[0].statement.startsWith('/* prepared */select'));
});

test('DATABASE_PREPARED_STATEMENTS=false: a statement marked PREPARED runs unnamed (a PgBouncer in transaction mode)', async (t) => {
  const handle = await onePooledConnection(t, false);
  for (let i = 0; i < 6; i++) {
    const { rows } = await sql<{ n: number }>`${PREPARED}select ${i}::int * 2 as n`.execute(handle.db);
    t.is(rows[0].n, i * 2);
  }
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements`.execute(handle.db);
  t.is(rows[0].n, 0);
});
