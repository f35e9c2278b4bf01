import test from 'ava';
import { gzipSync } from 'node:zlib';
import { buildDashboard } from './build.ts';

/** Issue 27: at most 150 KB of gzipped JavaScript for the first screen; every other screen a lazy chunk. */
const FIRST_SCREEN_BUDGET_GZ = 150 * 1024;

test('the first screen loads at most 150 KB of gzipped JavaScript, and the other screens are lazy chunks', async (t) => {
  const b = await buildDashboard();
  const size = (name: string) => gzipSync(b.files.find((f) => f.name === name)!.body, { level: 9 }).length;
  const first = [b.entry, ...b.preload];
  const firstGz = first.reduce((n, f) => n + size(f), 0);
  const lazy = b.files.filter((f) => f.name.endsWith('.js') && !first.includes(f.name));
  t.log(
    `first screen: ${first.map((f) => `${f} ${(size(f) / 1024).toFixed(1)} KB`).join(', ')}; total ${(firstGz / 1024).toFixed(1)} KB gzipped`,
  );
  t.log(`lazy: ${lazy.map((f) => `${f.name} ${(size(f.name) / 1024).toFixed(1)} KB`).join(', ')}`);
  t.true(firstGz <= FIRST_SCREEN_BUDGET_GZ, `${firstGz} B gzipped`);
  for (const screen of ['issues', 'page', 'journeys', 'explore', 'deploys', 'alerts', 'settings']) {
    t.true(
      lazy.some((f) => f.name.startsWith(`${screen}-`)),
      `${screen} is a lazy chunk`,
    );
  }
  // The stylesheet comes with the entry, and every name carries its content hash.
  t.is(b.css.length, 1);
  for (const f of b.files) t.regex(f.name, /^[a-z-]+-[A-Z0-9]{8}\.(js|css)$/);
});
