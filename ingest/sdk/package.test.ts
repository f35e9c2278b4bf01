/**
 * @friction/sdk as an npm package (issue 12, item 3): what `npm pack` in ingest/sdk would publish exists, its
 * version is the repo's, and a TypeScript project that installs it gets the declarations: a correct call
 * compiles, a wrong one does not.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { writeDist } from './build.ts';
import { typeScriptProject } from '../../shared/testing/packages.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const pkg = JSON.parse(readFileSync(path.join(here, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  module: string;
  types: string;
  files: string[];
  exports: Record<string, string | Record<string, string>>;
};

let work: string;
test.before(() => {
  work = mkdtempSync(path.join(tmpdir(), 'friction-sdk-pkg-'));
});
test.after.always(() => rmSync(work, { recursive: true, force: true }));

test("the package is @friction/sdk at the repo's version, and every file it points at is built", async (t) => {
  const rootPkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  t.is(pkg.name, '@friction/sdk');
  t.is(pkg.version, rootPkg.version, "the build stamps the repo's version into the SDK");
  const installed = path.join(work, 'node_modules', '@friction', 'sdk');
  const { version } = await writeDist(path.join(installed, 'dist'));
  t.true(version.startsWith(`${pkg.version}-`));
  cpSync(path.join(here, 'package.json'), path.join(installed, 'package.json'));
  const targets = [
    pkg.module,
    pkg.types,
    ...Object.values(pkg.exports).flatMap((e) => (typeof e === 'string' ? [e] : Object.values(e))),
  ];
  for (const target of targets.filter((x) => x !== './package.json')) {
    t.true(existsSync(path.join(installed, target)), `${target} exists`);
    t.true(
      pkg.files.some((f) => target.replace(/^\.\//, '').startsWith(f)),
      `${target} is published (files)`,
    );
  }
  const mod = (await import(path.join(installed, 'dist', 'friction.mjs'))) as Record<string, unknown>;
  t.is(mod.version, version);
});

test('a TypeScript project that installs it type-checks against the declarations', async (t) => {
  const installed = path.join(work, 'node_modules', '@friction', 'sdk');
  if (!existsSync(path.join(installed, 'dist', 'friction.d.ts'))) {
    await writeDist(path.join(installed, 'dist'));
    cpSync(path.join(here, 'package.json'), path.join(installed, 'package.json'));
  }
  const app = path.join(work, 'app');
  mkdirSync(app, { recursive: true });
  const run = typeScriptProject(app, { name: 'app', target: 'es2020', files: ['good.ts', 'bad.ts'] });
  cpSync(path.join(work, 'node_modules'), path.join(app, 'node_modules'), { recursive: true });
  writeFileSync(
    path.join(app, 'good.ts'),
    [
      "import Friction, { init, track, conversion, identify, flush, stats, version, type FrictionOptions } from '@friction/sdk';",
      "const options: FrictionOptions = { key: 'svc_pub_x', endpoint: 'https://friction.example.com', environment: 'staging', appVersion: '1.2.3', sampleRate: 0.5, ignore: ['#ads'], conversions: [{ name: 'checkout', page: '/thanks', value: 49 }], flushInterval: 2000 };",
      'const started: boolean | undefined = init(options);',
      "track('filter_used', { facet: 'size', count: 2 });",
      "conversion(49.9, { name: 'checkout' });",
      "identify('visitor-123');",
      'flush();',
      'const s = stats();',
      'const queued: number | undefined = s?.queued;',
      'const v: string = version;',
      'Friction.init(options);',
      'export { started, queued, v };',
    ].join('\n'),
  );
  writeFileSync(
    path.join(app, 'bad.ts'),
    "import { init } from '@friction/sdk';\ninit({ key: 'svc_pub_x', endpoint: 'https://x', flushInterval: '5s' });\ninit({ key: 'svc_pub_x' });\n",
  );
  const errors = await run();
  t.deepEqual(
    errors.split('\n').filter((l) => /error TS/.test(l) && !l.startsWith('bad.ts(')),
    [],
    'correct use compiles',
  );
  t.regex(errors, /bad\.ts\(2,.*flushInterval|bad\.ts\(2,\d+\): error TS2322/, 'a wrong option type is an error');
  t.regex(errors, /bad\.ts\(3,\d+\): error TS2345/, 'a missing endpoint is an error');
});
