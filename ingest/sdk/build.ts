/**
 * Builds the browser SDK with esbuild: one ESM file and one script-tag (IIFE, global `Friction`)
 * file, minified for ES2019 browsers. The ingest service calls buildSdk() at startup and serves the
 * IIFE at GET /v1/sdk.js; run directly (`node ingest/sdk/build.ts`, also `npm pack` in ingest/sdk) it writes
 * ingest/sdk/dist/, the files of the npm package @friction/sdk.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * Field names of the SDK's internal objects, which the minifier may shorten (the 8 KB budget needs
 * it). esbuild renames every property with these names, object-literal keys included, so none of
 * them may ever be a wire field, a public option, a stats key or a DOM/builtin property we use.
 */
const INTERNAL_PROPS =
  /^(scope|interactive|excluded|answered|current|first|last|start|known|point|filled|lastField|submitted|restart|done|attempt|seq|multiAt|submitAt|errorAt|sentAt|transport|anon|wanted|mutations|activity|route|multiClickAt|dropEvent|interval|beacon|busy|url|release|sample|info)$/;

async function bundle(entry: string, format: 'esm' | 'iife', version: string): Promise<string> {
  const out = await build({
    entryPoints: [path.join(here, 'src', entry)],
    bundle: true,
    minify: true,
    target: 'es2019',
    platform: 'browser',
    format,
    define: { __FRICTION_VERSION__: JSON.stringify(version) },
    mangleProps: INTERNAL_PROPS,
    legalComments: 'none',
    charset: 'utf8',
    write: false,
    logLevel: 'silent',
  });
  return out.outputFiles[0].text;
}

/**
 * Both builds as strings, and the version stamped into them: the package version plus 8 hex of a
 * hash of the code, so the URL or ETag of a long-cached /v1/sdk.js changes whenever the code does.
 */
export async function buildSdk(): Promise<{ esm: string; iife: string; version: string }> {
  const pkg = JSON.parse(readFileSync(path.join(here, '..', '..', 'package.json'), 'utf8')) as { version: string };
  const probe = await bundle('script.ts', 'iife', '');
  const version = `${pkg.version}-${createHash('sha256').update(probe).digest('hex').slice(0, 8)}`;
  const [esm, iife] = await Promise.all([bundle('index.ts', 'esm', version), bundle('script.ts', 'iife', version)]);
  return { esm, iife, version };
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
