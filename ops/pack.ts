/**
 * `npm run pack`: builds the installable artifacts and writes their tarballs to dist/ (issue 28, item 1):
 *   dist/friction-cli-<version>.tgz   @friction/cli, one esbuild bundle for Node 20+ (cli/build.ts)
 *   dist/friction-sdk-<version>.tgz   @friction/sdk, the browser SDK (its prepack builds ingest/sdk/dist)
 * It also refreshes ci/friction.mjs, the bundle the GitHub Action runs (ops/action.test.ts checks it is current).
 * Publishing needs registry credentials: `npm publish dist/friction-cli-<version>.tgz`.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCliBundle } from '../cli/build.ts';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Runs `npm pack` in a package directory; returns the tarball's path. */
function npmPack(dir: string, dest: string): string {
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dest], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // A prepack script's output comes first on stdout; npm's JSON report is the array after it.
  const [{ filename }] = JSON.parse(out.slice(out.search(/^\[/m))) as { filename: string }[];
  return path.join(dest, filename);
}

const writeExecutable = (file: string, text: string): void => {
  writeFileSync(file, text);
  chmodSync(file, 0o755);
};

/** @friction/cli's tarball in `dest`; `refreshAction` also rewrites the Action's committed copy of the bundle. */
export async function packCli(dest: string, opts: { refreshAction: boolean }): Promise<string> {
  mkdirSync(dest, { recursive: true });
  const bundle = await buildCliBundle();
  writeExecutable(path.join(root, 'cli', 'friction.mjs'), bundle);
  if (opts.refreshAction) writeExecutable(path.join(root, 'ci', 'friction.mjs'), bundle);
  return npmPack(path.join(root, 'cli'), dest);
}

/** @friction/sdk's tarball in `dest` (its prepack builds ingest/sdk/dist). */
export function packSdk(dest: string): string {
  mkdirSync(dest, { recursive: true });
  return npmPack(path.join(root, 'ingest', 'sdk'), dest);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dest = path.join(root, 'dist');
  const cli = await packCli(dest, { refreshAction: true });
  const sdk = packSdk(dest);
  process.stdout.write(`${path.relative(process.cwd(), cli)}\n${path.relative(process.cwd(), sdk)}\n`);
}
