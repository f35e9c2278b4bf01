import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { tarEntries, tarOf } from './tar.ts';

/** An archive written by the system's tar, as PGlite's are ustar archives of short names. */
function systemTar(files: Record<string, string>, extra?: (dir: string) => void): Buffer {
  const dir = mkdtempSync(path.join(tmpdir(), 'friction-tar-'));
  try {
    for (const [name, body] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), body);
    }
    extra?.(dir);
    return execFileSync('tar', ['--format=ustar', '-cf', '-', '-C', dir, '.']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('reads directories and files with their bytes, and copies entries into a new archive unchanged', (t) => {
  const tar = systemTar({ 'a/b.txt': 'hello', 'a/empty': '', 'c.bin': 'x'.repeat(1500) });
  const entries = [...tarEntries(tar)];
  const files = Object.fromEntries(entries.filter((e) => e.type === 'file').map((e) => [e.name, e.data.toString()]));
  t.deepEqual(files, { './a/b.txt': 'hello', './a/empty': '', './c.bin': 'x'.repeat(1500) });
  t.true(entries.some((e) => e.type === 'directory' && e.name === './a/'));
  t.true(entries.every((e) => e.mtime > 0));
  const copy = [...tarEntries(tarOf(entries.filter((e) => e.name !== './c.bin')))];
  t.deepEqual(
    copy.map((e) => [e.name, e.data.toString()]),
    entries.filter((e) => e.name !== './c.bin').map((e) => [e.name, e.data.toString()]),
  );
});

test('refuses what it does not read rather than misreading it: a link, an archive cut short', (t) => {
  const withLink = systemTar({ 'f.txt': 'x' }, (dir) => symlinkSync('f.txt', path.join(dir, 'l')));
  t.throws(() => [...tarEntries(withLink)], { message: /tar type 2: \.\/l/ });
  const whole = systemTar({ 'f.txt': 'y'.repeat(2000) });
  t.throws(() => [...tarEntries(whole.subarray(0, 1536))], { message: /ends inside its entry \.\/f\.txt/ });
});
