import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The embedded data directory is held by a live process: the caller prints the message and exits 1. */
export class DataDirectoryInUse extends Error {
  override name = 'StartupError';
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user; it still holds the directory.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Takes `dataDir/lock` (the holder's pid) for as long as the embedded database is open. PGlite is one process's
 * files: a second process opening them aborts inside WebAssembly with a stack trace, so the second one is told
 * who holds the directory instead. A lock left by a process that died (or by this pid in an earlier life, as
 * pid 1 of a restarted container) is taken over. Returns the release function.
 */
export function lockDataDirectory(dataDir: string): () => void {
  const file = join(dataDir, 'lock');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        rmSync(file, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) {
        throw new DataDirectoryInUse(
          `another Friction process (pid ${holder}) holds the embedded data directory ${dataDir} (FRICTION_DATA_DIR): stop it, or give this one another FRICTION_DATA_DIR`,
        );
      }
      rmSync(file, { force: true });
    }
  }
  throw new DataDirectoryInUse(`cannot take the lock ${file} of the embedded data directory (FRICTION_DATA_DIR)`);
}
