import test from 'ava';
import { spawnRole } from '../testing/processes.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGliteThread } from './pglite-thread.ts';
import { isRetriable, isUniqueViolation } from '../errors.ts';
import { embeddedTemplate } from '../testing/embedded-template.ts';

// The embedded database in its worker thread: what crosses the boundary, and what happens when the thread dies.

test('statements run in the thread: rows with their types, affected counts, SQLSTATE errors', async (t) => {
  // Seeded from the embedded template (a dump of a migrated database): it holds what the dump held.
  const lite = await PGliteThread.open('memory://', await embeddedTemplate());
  t.teardown(() => lite.close());
  const migrated = await lite.query<{ n: number }>('select count(*)::int as n from kysely_migration');
  t.true(migrated.rows[0].n > 0);
  await lite.query('create table t (id int primary key, at timestamptz not null, body bytea)');
  const ins = await lite.query('insert into t values ($1, $2, $3), ($4, $5, $6)', [
    1,
    new Date('2026-01-02T03:04:05Z'),
    new Uint8Array([1, 2]),
    2,
    '2026-01-03T00:00:00Z',
    null,
  ]);
  t.is(ins.affectedRows, 2);
  const { rows } = await lite.query<{ id: number; at: Date; body: Uint8Array | null }>('select * from t order by id');
  t.deepEqual(rows[0], { id: 1, at: new Date('2026-01-02T03:04:05Z'), body: new Uint8Array([1, 2]) });
  t.true(rows[1].at instanceof Date);
  const err = await t.throwsAsync(lite.query('insert into t values (1, now(), null)'));
  t.true(isUniqueViolation(err));
  t.is((err as unknown as { constraint: string }).constraint, 't_pkey');
  // The connection is still usable after a failed statement.
  t.deepEqual((await lite.query<{ n: number }>('select count(*)::int as n from t')).rows, [{ n: 2 }]);
});

test('arrays of base types parse as on the server; arrays of row types come back as text, as node-postgres leaves them', async (t) => {
  // The worker drops the parsers of row-type arrays (pglite-worker.ts): the element types our queries return keep theirs.
  const lite = await PGliteThread.open('memory://', await embeddedTemplate());
  t.teardown(() => lite.close());
  const { rows } = await lite.query<Record<string, unknown>>(`
    select array[1, 2]::int4[] as ints, array['a', 'b,c']::text[] as texts, array[1.5]::float8[] as floats,
      array['2026-01-02T03:04:05Z']::timestamptz[] as times, array[9007199254740993]::int8[] as bigs,
      array['7b0d3f4e-2d5c-4a8e-9f1a-0c2b3d4e5f60']::uuid[] as uuids, array[true, false] as bools,
      array[row('o', 1)::kysely_migration_lock] as locks`);
  t.deepEqual(rows[0], {
    ints: [1, 2],
    texts: ['a', 'b,c'],
    floats: [1.5],
    times: [new Date('2026-01-02T03:04:05Z')],
    bigs: [9007199254740993n],
    uuids: ['7b0d3f4e-2d5c-4a8e-9f1a-0c2b3d4e5f60'],
    bools: [true, false],
    locks: '{"(o,1)"}',
  });
});

test('a dead thread fails the waiting and later queries with a retriable error, and resolves lost', async (t) => {
  const lite = await PGliteThread.open('memory://', await embeddedTemplate());
  const waiting = lite.query('select pg_sleep(30)');
  await lite.kill();
  const err = await t.throwsAsync(waiting);
  t.is((err as unknown as { code: string }).code, '08006');
  t.true(isRetriable(err));
  t.regex((await lite.lost).message, /embedded database thread is gone/);
  const t0 = performance.now();
  await t.throwsAsync(lite.query('select 1'), { message: /gone/ });
  // At once, not after a timeout: well under a second even with the other core busy (a timeout would be 30 s).
  t.true(performance.now() - t0 < 2000);
  await lite.close();
});

test('close lets statements already posted finish and flushes them to disk', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'friction-pglite-thread-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // Seeded into the directory (not a new database: seconds of PGlite's initdb that this does not check).
  const first = await PGliteThread.open(dir, await embeddedTemplate());
  await first.query('create table t (id int)');
  const posted = Array.from({ length: 50 }, (_, i) => first.query('insert into t values ($1)', [i]));
  await first.close();
  await Promise.all(posted);
  await t.throwsAsync(first.query('select 1'));
  const again = await PGliteThread.open(dir);
  t.teardown(() => again.close());
  t.deepEqual((await again.query<{ n: number }>('select count(*)::int as n from t')).rows, [{ n: 50 }]);
});

test('a process whose database thread dies reports it and exits 1 instead of hanging', async (t) => {
  const child = spawnRole(['shared/testing/database-loss-fixture.ts'], {}, { stdout: 'pipe' });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.is(code, 1);
  t.regex(out, /query failed: 08006/);
  t.regex(out, /the embedded database thread died; exiting/);
});
