/**
 * Builds the dashboard: esbuild bundles api/dashboard/app (Preact, JSX) into ES modules with code splitting, so
 * the first screen loads the entry and its shared chunks while every other screen is a lazy chunk. Names carry a
 * content hash (served immutable); index.html, which names them, is generated here and never cached. The same
 * esbuild as the SDK; no terser pass: esbuild's minifier is within a few percent on this code, and the dashboard
 * has a budget (150 KB gzipped for the first screen), not the SDK's byte hunt.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const OUT = path.join(here, 'out');

export interface DashboardFile {
  /** URL path under /assets/. */
  name: string;
  contentType: string;
  body: Buffer;
}

export interface DashboardBuild {
  files: DashboardFile[];
  /** The entry script, its statically imported chunks (preloaded) and the stylesheet: what the first screen loads. */
  entry: string;
  preload: string[];
  css: string[];
}

const typeOf = (name: string): string =>
  name.endsWith('.js')
    ? 'text/javascript; charset=utf-8'
    : name.endsWith('.css')
      ? 'text/css; charset=utf-8'
      : name.endsWith('.svg')
        ? 'image/svg+xml'
        : 'application/octet-stream';

/** Every chunk the entry imports statically, transitively: the browser needs them before the first paint. */
function staticImports(meta: Metafile, entry: string): string[] {
  const seen = new Set<string>();
  const walk = (file: string) => {
    for (const imp of meta.outputs[file]?.imports ?? []) {
      if (imp.kind === 'import-statement' && !seen.has(imp.path)) {
        seen.add(imp.path);
        walk(imp.path);
      }
    }
  };
  walk(entry);
  return [...seen];
}

export async function buildDashboard(): Promise<DashboardBuild> {
  const out = await build({
    entryPoints: [path.join(here, 'app', 'main.tsx')],
    bundle: true,
    splitting: true,
    format: 'esm',
    minify: true,
    target: 'es2020',
    platform: 'browser',
    outdir: OUT,
    entryNames: '[name]-[hash]',
    chunkNames: '[name]-[hash]',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    charset: 'utf8',
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  const rel = (p: string) => path.relative(OUT, path.resolve(p)).split(path.sep).join('/');
  const files = out.outputFiles.map((f) => ({
    name: rel(f.path),
    contentType: typeOf(f.path),
    body: Buffer.from(f.contents),
  }));
  const meta = out.metafile;
  const entryKey = Object.keys(meta.outputs).find((k) => meta.outputs[k].entryPoint !== undefined && k.endsWith('.js'));
  if (!entryKey) throw new Error('the dashboard build produced no entry script');
  const cssKey = meta.outputs[entryKey].cssBundle;
  return {
    files,
    entry: rel(entryKey),
    preload: staticImports(meta, entryKey).map(rel),
    css: cssKey ? [rel(cssKey)] : [],
  };
}
