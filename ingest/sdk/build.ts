/**
 * Builds the browser SDK: esbuild bundles and minifies one ESM file and one script-tag (IIFE, global `Friction`)
 * file for ES2020 browsers, then terser compresses each once more (190-220 B gzipped that esbuild's single pass
 * leaves: the 8 KB budget needs them). The ingest service calls buildSdk() at startup and serves the IIFE at
 * GET /v1/sdk.js; run directly (`node ingest/sdk/build.ts`, also `npm pack` in ingest/sdk) it writes
 * ingest/sdk/dist/, the files of the npm package @friction/sdk.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { build, version as esbuildVersion } from 'esbuild';
import type { MinifyOptions } from 'terser';
import { diskCache } from '../../shared/disk-cache.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const SRC = path.join(here, 'src');

/**
 * Field names of the SDK's internal objects, which the minifier may shorten (the 8 KB budget needs
 * it). esbuild renames every property with these names, object-literal keys included, so none of
 * them may ever be a wire field, a public option, a stats key or a DOM/builtin property we use.
 */
const INTERNAL_PROPS =
  /^(scope|interactive|excluded|answered|current|first|last|start|known|point|filled|lastField|submitted|restart|done|attempt|seq|submitAt|errorAt|sentAt|transport|anon|wanted|mutations|activity|route|dropEvent|interval|beacon|busy|url|release|sample|info|el|at|click|missed|down)$/;

/** One esbuild bundle, and whether every file it read lies under src/ (what the build cache's key covers). */
async function bundle(entry: string, format: 'esm' | 'iife', version: string): Promise<{ code: string; own: boolean }> {
  const out = await build({
    entryPoints: [path.join(SRC, entry)],
    bundle: true,
    minify: true,
    target: 'es2020',
    platform: 'browser',
    format,
    define: { __FRICTION_VERSION__: JSON.stringify(version) },
    mangleProps: INTERNAL_PROPS,
    // No "use strict" prologue in the script-tag build (13 B): the code never relies on strict-mode errors, and
    // where it differs it is kinder to the host (patching a frozen window.fetch fails quietly instead of throwing).
    // The ESM build is strict anyway, as every module is. Nothing else of the project's tsconfig concerns esbuild.
    tsconfigRaw: { compilerOptions: { alwaysStrict: false } },
    legalComments: 'none',
    charset: 'utf8',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const own = Object.keys(out.metafile.inputs).every((f) => !path.relative(SRC, path.resolve(f)).startsWith('..'));
  return { code: out.outputFiles[0].text, own };
}

/**
 * terser's pass over esbuild's output: three compress passes, names mangled, comments dropped. esbuild has already
 * renamed INTERNAL_PROPS. Of the `unsafe*` transforms only three that hold for this code: arrows (no function uses
 * `this` or `arguments`), math (reordered products: float rounding only, harmless for delays and coordinates) and `void 0` for undefined. Never `unsafe_comps`:
 * it turns `n >= 0 ? a : b` into `n < 0 ? b : a`, which is wrong for NaN (an absent Retry-After then meant no backoff;
 * transport.browser.test.ts caught it). Not `hoist_funs` either for now (10 B): with it,
 * ops/e2e/sdk-consent.browser.test.ts failed twice (nothing sent within 15 s of optIn() and a reload), though that
 * test also failed once at load 45 on a build without it, so whether it is at fault is not settled.
 */
const TERSER: MinifyOptions = {
  ecma: 2020,
  compress: { passes: 3, unsafe_arrows: true, unsafe_math: true, unsafe_undefined: true },
  mangle: true,
  format: { comments: false },
};
const terserVersion = (createRequire(import.meta.url)('terser/package.json') as { version: string }).version;
/** What decides terser's output besides the code: part of every cache key, and of the version. */
const TERSER_ID = `terser ${terserVersion} ${JSON.stringify(TERSER)}`;

/** One file for minify-worker.ts. */
export interface MinifyJob {
  code: string;
  options: MinifyOptions;
}

/**
 * terser's output is a pure function of its input, options and version, so it is kept on disk under a hash of the
 * three (shared/disk-cache.ts): ingest builds the SDK at every start, and terser costs about a second of CPU where
 * esbuild costs 0.1 s.
 */
const minified = diskCache('friction-sdk', '.js');
const cacheKey = (job: MinifyJob): string[] => [TERSER_ID, job.options.module ? 'module' : 'script', job.code];

/** Runs terser on the jobs in a worker thread, so a service building at start keeps answering meanwhile. */
function minifyInWorker(jobs: MinifyJob[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    // execArgv []: the worker needs none of the parent's flags, and some (--input-type, --eval) would stop it loading.
    const worker = new Worker(new URL('./minify-worker.ts', import.meta.url), { workerData: jobs, execArgv: [] });
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the SDK minifier exited with code ${code} before answering`)));
  });
}

/** esbuild's outputs after terser's pass, from the cache when it has them. */
async function shrink(jobs: MinifyJob[]): Promise<string[]> {
  const out = jobs.map((job) => minified.get(cacheKey(job))?.toString('utf8'));
  const todo = jobs.filter((_, i) => out[i] === undefined);
  if (todo.length) {
    const fresh = await minifyInWorker(todo);
    for (const [k, job] of todo.entries()) {
      minified.put(cacheKey(job), fresh[k]);
      out[jobs.indexOf(job)] = fresh[k];
    }
  }
  return out as string[];
}

/**
 * The finished builds are kept on disk too, under a hash of what decides them: every file under src/, this file
 * (esbuild's and terser's options), esbuild's and terser's versions and the package version. Ingest builds the SDK
 * at every start (three esbuild runs, about 0.2 s of CPU), and so does every test stack. A build that read a file
 * outside src/ is not kept, since the key would not cover it.
 */
const builds = diskCache('friction-sdk-build', '.json');
const buildKey = (pkgVersion: string): (string | Buffer)[] => [
  TERSER_ID,
  `esbuild ${esbuildVersion}`,
  pkgVersion,
  readFileSync(fileURLToPath(import.meta.url)),
  ...readdirSync(SRC, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.join(d.parentPath, d.name))
    .sort()
    .flatMap((f) => [path.relative(SRC, f), readFileSync(f)]),
];

/**
 * Both builds as strings, and the version stamped into them: the package version plus 8 hex of a
 * hash of the code (and of the terser pass), so the URL or ETag of a long-cached /v1/sdk.js changes whenever the
 * bytes do.
 */
export async function buildSdk(): Promise<{ esm: string; iife: string; version: string }> {
  const pkg = JSON.parse(readFileSync(path.join(here, '..', '..', 'package.json'), 'utf8')) as { version: string };
  const key = buildKey(pkg.version);
  const hit = builds.get(key);
  if (hit) return JSON.parse(hit.toString('utf8')) as { esm: string; iife: string; version: string };
  const probe = await bundle('script.ts', 'iife', '');
  const version = `${pkg.version}-${createHash('sha256').update(TERSER_ID).update(probe.code).digest('hex').slice(0, 8)}`;
  const [esm, iife] = await Promise.all([bundle('index.ts', 'esm', version), bundle('script.ts', 'iife', version)]);
  const [esmMin, iifeMin] = await shrink([
    { code: esm.code, options: { ...TERSER, module: true } },
    { code: iife.code, options: { ...TERSER, module: false } },
  ]);
  const result = { esm: esmMin, iife: iifeMin, version };
  if (probe.own && esm.own && iife.own) builds.put(key, JSON.stringify(result));
  return result;
}

/**
 * Writes the publishable package's files into `dist` (default ingest/sdk/dist): friction.mjs (ESM), friction.js
 * (script tag) and friction.d.ts (the declarations, checked against the code by declarations.check.ts).
 */
export async function writeDist(dist = path.join(here, 'dist')): Promise<{ version: string; files: string[] }> {
  const { esm, iife, version } = await buildSdk();
  mkdirSync(dist, { recursive: true });
  writeFileSync(path.join(dist, 'friction.mjs'), esm);
  writeFileSync(path.join(dist, 'friction.js'), iife);
  copyFileSync(path.join(here, 'friction.d.ts'), path.join(dist, 'friction.d.ts'));
  return { version, files: ['friction.mjs', 'friction.js', 'friction.d.ts'] };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { version } = await writeDist();
  console.log(`@friction/sdk ${version}: dist/friction.mjs, dist/friction.js, dist/friction.d.ts`);
}
