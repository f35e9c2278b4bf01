import test from 'ava';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import ts from 'typescript';
import { openDatabase, type DatabaseHandle } from './connection.ts';
import { createTestDatabase } from '../testing/database.ts';
import { openEmbeddedTestDatabase } from '../testing/embedded-template.ts';

/**
 * The table types (tables/*.table.ts, assembled into `Database` by database.ts) are written by hand beside the
 * migrations; nothing else ties the two. This test takes a freshly migrated database, on PostgreSQL and on the embedded
 * PGlite (the run's templates: each a new database every migration ran on, the PostgreSQL one per run, the embedded
 * one per change of the migrations), and compares every table's columns (names and nullability) with the declared table interfaces, so a
 * migration and its type cannot drift; and checks that every table interface of tables/ is in `Database`.
 */

interface DeclaredColumn {
  nullable: boolean;
  optional: boolean;
}

const databaseFile = fileURLToPath(new URL('./database.ts', import.meta.url));
const tablesDir = fileURLToPath(new URL('./tables/', import.meta.url));

/** The select type of a property: kysely's `ColumnType<S, I, U>` (and `Generated<T>`) is `{ __select__: S, … }`. */
function selectTypes(checker: ts.TypeChecker, type: ts.Type): ts.Type[] {
  const members = type.isUnion() ? type.types : [type];
  return members.flatMap((member) => {
    const select = member.getProperty('__select__');
    return select ? selectTypes(checker, checker.getTypeOfSymbol(select)) : [member];
  });
}

/** Table name -> column name -> declared nullability, read from database.ts with the TypeScript checker. */
function declaredTables(): { tables: Map<string, Map<string, DeclaredColumn>>; unassembled: string[] } {
  // strict, so that `| null` survives in the resolved types.
  const program = ts.createProgram([databaseFile], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(databaseFile);
  if (!source) throw new Error(`cannot read ${databaseFile}`);
  const database = source.statements.find(
    (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'Database',
  );
  if (!database) throw new Error('database.ts declares no Database interface');
  const tables = new Map<string, Map<string, DeclaredColumn>>();
  for (const table of checker.getPropertiesOfType(checker.getTypeAtLocation(database))) {
    const columns = new Map<string, DeclaredColumn>();
    for (const column of checker.getPropertiesOfType(checker.getTypeOfSymbol(table))) {
      const types = selectTypes(checker, checker.getTypeOfSymbol(column));
      columns.set(column.name, {
        nullable: types.some((t) => (t.flags & ts.TypeFlags.Null) !== 0),
        optional: (column.flags & ts.SymbolFlags.Optional) !== 0,
      });
    }
    tables.set(table.name, columns);
  }
  // Every `…Table` interface a table file exports must be a table of `Database`: one left out is never checked.
  const assembled = new Set(
    database.members.flatMap((m) => (ts.isPropertySignature(m) && m.type ? [m.type.getText(source)] : [])),
  );
  const unassembled = program
    .getSourceFiles()
    .filter((file) => file.fileName.startsWith(tablesDir))
    .flatMap((file) => file.statements.filter(ts.isInterfaceDeclaration).map((s) => s.name.text))
    .filter((name) => name.endsWith('Table') && !assembled.has(name));
  return { tables, unassembled };
}

/** Table name -> column name -> nullable, as the migrated database has them. */
async function actualTables(handle: DatabaseHandle): Promise<Map<string, Map<string, boolean>>> {
  // Only the public schema: TimescaleDB keeps its catalog, chunks and information views in its own schemas
  // (_timescaledb_*, timescaledb_information, timescaledb_experimental), which exist only where the extension is
  // and are not ours to type. kysely_migration and kysely_migration_lock are the migrator's bookkeeping, never
  // queried through the Database type. Views in public count as tables (kysely queries them alike).
  const rows = (
    await sql<{ table_name: string; column_name: string; is_nullable: 'YES' | 'NO' }>`
      select table_name, column_name, is_nullable
      from information_schema.columns
      where table_schema = 'public' and table_name not like 'kysely\\_migration%'
      order by table_name, ordinal_position`.execute(handle.db)
  ).rows;
  const tables = new Map<string, Map<string, boolean>>();
  for (const row of rows) {
    const columns = tables.get(row.table_name) ?? new Map<string, boolean>();
    columns.set(row.column_name, row.is_nullable === 'YES');
    tables.set(row.table_name, columns);
  }
  return tables;
}

/** Every disagreement between the database and the type, one line each (empty: none). */
function drift(
  declared: Map<string, Map<string, DeclaredColumn>>,
  actual: Map<string, Map<string, boolean>>,
): string[] {
  const problems: string[] = [];
  for (const table of actual.keys())
    if (!declared.has(table)) problems.push(`table ${table} is in the database but not in the Database type`);
  for (const [table, columns] of declared) {
    const real = actual.get(table);
    if (!real) {
      problems.push(`table ${table} is in the Database type but not in the database`);
      continue;
    }
    for (const column of real.keys())
      if (!columns.has(column)) problems.push(`${table}.${column} is in the database but not in the type`);
    for (const [column, { nullable, optional }] of columns) {
      // kysely selects every column; an optional property would claim a column may be absent from a row.
      if (optional) problems.push(`${table}.${column} is optional in the type (a column is always selected)`);
      const realNullable = real.get(column);
      if (realNullable === undefined) problems.push(`${table}.${column} is in the type but not in the database`);
      else if (realNullable && !nullable) problems.push(`${table}.${column} is nullable but its type has no null`);
      else if (!realNullable && nullable) problems.push(`${table}.${column} is not null but its type includes null`);
    }
  }
  return problems;
}

const { tables: declared, unassembled } = declaredTables();

test('every table interface of tables/ is a table of the Database type', (t) => {
  t.deepEqual(unassembled, []);
});

test('the type reader sees the tables, their columns and their nulls', (t) => {
  // Guards the reader itself: an empty or all-nullable/none-nullable reading would make the comparison vacuous.
  t.true(declared.size >= 30);
  t.deepEqual(declared.get('orgs')?.get('trial_ends_at'), { nullable: true, optional: false });
  t.deepEqual(declared.get('orgs')?.get('plan'), { nullable: false, optional: false });
  t.deepEqual(declared.get('sites')?.get('deleted_at'), { nullable: true, optional: false });
  t.deepEqual(declared.get('orgs')?.get('id'), { nullable: false, optional: false });
});

test('the comparison names each kind of drift', (t) => {
  const types = new Map([
    [
      'a',
      new Map([
        ['x', { nullable: false, optional: false }],
        ['y', { nullable: true, optional: false }],
        ['z', { nullable: false, optional: true }],
      ]),
    ],
    ['gone', new Map()],
  ]);
  const db = new Map([
    [
      'a',
      new Map([
        ['x', true],
        ['y', false],
        ['z', false],
        ['w', false],
      ]),
    ],
    ['extra', new Map()],
  ]);
  t.deepEqual(drift(types, db).sort(), [
    'a.w is in the database but not in the type',
    'a.x is nullable but its type has no null',
    'a.y is not null but its type includes null',
    'a.z is optional in the type (a column is always selected)',
    'table extra is in the database but not in the Database type',
    'table gone is in the Database type but not in the database',
  ]);
});

test('a freshly migrated PostgreSQL database has exactly the columns and nullability of the Database type', async (t) => {
  // A clone of the run's template: a new, empty database that migrateToLatest migrated (test-with-services.ts).
  const scratch = await createTestDatabase('schema_types');
  const handle = await openDatabase({ url: scratch.url, dataDir: '' });
  t.teardown(async () => {
    await handle.close();
    await scratch.drop();
  });
  t.deepEqual(drift(declared, await actualTables(handle)), []);
});

test('a freshly migrated embedded database has exactly the columns and nullability of the Database type', async (t) => {
  // A copy of the embedded template: a new PGlite that migrateToLatest migrated (embedded-template.ts), made anew
  // whenever a migration changes.
  const handle = await openEmbeddedTestDatabase();
  t.teardown(() => handle.close());
  t.deepEqual(drift(declared, await actualTables(handle)), []);
});
