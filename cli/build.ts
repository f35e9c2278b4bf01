/**
 * Builds the `@friction/cli` bundle: cli/main.ts and what it imports as one ES module for Node 20 and newer, with
 * the entry's shebang. esbuild's output depends only on its input and options, so the copy committed for the GitHub Action
 * (ci/friction.mjs) can be compared with a fresh build.
 */
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The bundle's text. */
export async function buildCliBundle(): Promise<string> {
  const result = await build({
    entryPoints: [path.join(here, 'main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    // Minified: the committed copy (ci/friction.mjs) is a build artifact, not a second copy of the sources to read.
    minify: true,
    // Template literals lowered to plain strings: the usage texts stay on one line each ("…\n…"), so the artifact
    // holds no line-for-line copy of the sources' text (ops/action.test.ts still compares it with a fresh build).
    supported: { 'template-literal': false },
    legalComments: 'none',
    // Node built-ins only: anything else would have to be installed beside the one file.
    external: ['node:*'],
    logLevel: 'silent',
  });
  // esbuild keeps the entry's shebang (cli/main.ts) at the top.
  return result.outputFiles[0].text;
}
