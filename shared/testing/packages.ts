/**
 * Test-only: a package as its users meet it: installed from its tarball by the machine's own npm, and compiled in a
 * TypeScript project of their own.
 */
import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The machine's own Node and npm, not the repo's pinned Node 24: what a user's CI has. */
export const SYSTEM_PATH = '/usr/bin:/bin';

const tsc = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'node_modules', '.bin', 'tsc');

/**
 * Installs `tarball` into `dir` with the machine's npm (HOME `dir`), offline (from npm's cache), with no audit, fund
 * or update-notifier calls. Rejects with npm's stderr. `dir` gets a package.json of its own first (when it has none),
 * as a user's project has: in a directory without one npm installs into the nearest parent that has a package.json or
 * a node_modules, and a stray one in the system's temporary directory once sent both package tests' installs there.
 */
export function npmInstallOffline(dir: string, tarball: string): Promise<void> {
  const manifest = path.join(dir, 'package.json');
  if (!existsSync(manifest)) writeFileSync(manifest, JSON.stringify({ name: 'app', private: true }));
  return new Promise((resolve, reject) => {
    execFile(
      'npm',
      ['install', '--offline', '--no-audit', '--no-fund', '--no-update-notifier', tarball],
      { cwd: dir, env: { PATH: SYSTEM_PATH, HOME: dir }, timeout: 120_000 },
      (err, _stdout, stderr) => (err ? reject(new Error(`npm install of ${tarball} failed: ${stderr}`)) : resolve()),
    );
  });
}

/**
 * Writes a strict, emit-free TypeScript project into `dir` (an ES module package named `name`) that compiles `files`
 * for `target` with the DOM library and no ambient `@types`. Returns `check()`: the repo's tsc on it, resolving to ''
 * when it compiles and to tsc's errors when not. A test checks what must compile and what must not in one run
 * (a file each): every tsc start parses the DOM library again, about 2.5 s of CPU.
 */
export function typeScriptProject(
  dir: string,
  o: { name: string; target: 'es2020' | 'es2022'; files: string[] },
): () => Promise<string> {
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: o.name, type: 'module', private: true }));
  const compilerOptions = {
    target: o.target,
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    noEmit: true,
    lib: [o.target, 'dom'],
    types: [],
    typeRoots: [],
  };
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: o.files }));
  return () =>
    promisify(execFile)(tsc, ['-p', dir], { cwd: dir }).then(
      () => '',
      (e: { stdout: string }) => e.stdout || String(e),
    );
}
