/**
 * Results of pure, costly work (terser's pass over the SDK, brotli at quality 11) kept on disk, named by a hash of
 * everything that decides them, so a process that starts again does not redo it. The cache lives beside the installed
 * packages (node_modules/.cache, the usual place), not in a shared temporary directory, where another local user
 * could plant what we serve. A cache that cannot be written (a read-only image) only means the work is done again.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', '.cache');

export interface DiskCache {
  /** The entry whose key parts are `parts`, or undefined when missing or unreadable. */
  get(parts: readonly (string | Buffer)[]): Buffer | undefined;
  put(parts: readonly (string | Buffer)[], value: string | Buffer): void;
}

/** The cache in node_modules/.cache/`name`. */
export function diskCache(name: string, ext = ''): DiskCache {
  const dir = path.join(root, name);
  const file = (parts: readonly (string | Buffer)[]) => {
    const hash = createHash('sha256');
    // Each part's length first: ['ab', 'c'] and ['a', 'bc'] are different keys.
    for (const p of parts) hash.update(`${p.length}:`).update(p);
    return path.join(dir, `${hash.digest('hex')}${ext}`);
  };
  return {
    get(parts) {
      try {
        return readFileSync(file(parts));
      } catch {
        return undefined;
      }
    },
    put(parts, value) {
      try {
        mkdirSync(dir, { recursive: true });
        // Written aside and renamed into place: a process reading at the same time never reads half a file.
        const target = file(parts);
        const tmp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
        writeFileSync(tmp, value);
        renameSync(tmp, target);
      } catch {
        // Read-only or full disk: the next start does the work again.
      }
    },
  };
}

/** The cached value of `parts`, or `make()`'s, stored for the next time. */
export async function cachedOr(
  cache: DiskCache,
  parts: readonly (string | Buffer)[],
  make: () => Promise<Buffer>,
): Promise<Buffer> {
  const hit = cache.get(parts);
  if (hit) return hit;
  const value = await make();
  cache.put(parts, value);
  return value;
}
