import test from 'ava';
import { readdirSync } from 'node:fs';
import { migrations } from './index.ts';

test('the static migration list matches the migration files, in order', (t) => {
  const files = readdirSync(new URL('.', import.meta.url))
    .filter((f) => /^\d{4}_.+\.ts$/.test(f) && !f.endsWith('.test.ts'))
    .map((f) => f.replace(/\.ts$/, ''))
    .sort();
  t.deepEqual(Object.keys(migrations), files);
});
