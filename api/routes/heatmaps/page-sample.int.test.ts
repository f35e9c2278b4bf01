import test from 'ava';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { DatabaseHandle } from '../../../shared/db/connection.ts';
import { HOUR_MS, rebuildPageHeatmapHours } from '../../../shared/db/page-heatmap-hours.ts';
import { seeded } from '../../../shared/seeded-random.ts';
import { openEmbeddedTestDatabase } from '../../../shared/testing/embedded-template.ts';
import { withTestDatabase } from '../../../shared/testing/database.ts';
import { pageHeatmapAnswer, presentPageHeatmap } from './heatmaps.presenter.ts';
import { PAGE_HEATMAP_WALK_MAX_STEP, pageHeatmapPoints, sampledPageSignals } from './heatmaps.queries.ts';
import { numberedPageSample } from './page-sample.reference.ts';

// The page heatmap's sample from the hourly counts (sampledPageSignals) against its definition (numberedPageSample:
// every signal of the window numbered): the same rows in the same order, for any clock, device filter and page size,
// on PostgreSQL and on the embedded database; and the route's answer text the database writes (pageHeatmapPoints)
// against the presented sample.

const NOW = Date.parse('2026-03-15T12:34:56.789Z');
const DAY = 86_400_000;
const DEVICES = ['desktop', 'mobile', 'tablet'] as const;

/**
 * `n` signals of `page` over the 40 days before NOW (and a few after), some in bursts of one millisecond (ties broken
 * by event id), some without viewport coordinates; `dense` puts most of them in one hour.
 */
function signalsOf(siteId: string, environment: string, page: string, n: number, seed: number, dense = false) {
  const rnd = seeded(seed);
  const rows: unknown[][] = [];
  let burst = 0;
  let at = 0;
  for (let i = 0; i < n; i++) {
    if (burst-- <= 0) {
      at =
        dense && rnd() < 0.8
          ? NOW - 10 * DAY + Math.floor(rnd() * HOUR_MS)
          : NOW - Math.floor(rnd() * 40 * DAY) + DAY / 2;
      burst = rnd() < 0.1 ? Math.floor(rnd() * 5) : 0;
    }
    const located = rnd() < 0.9;
    const v = () => (located ? Math.floor(rnd() * 1001) : null);
    const p = rnd() < 0.5 ? Math.floor(rnd() * 1001) : null;
    // Now and then one of px/py without the other (no document point), and selectors JSON must escape or leave out.
    const half = rnd() < 0.05;
    rows.push([
      siteId,
      randomUUID(),
      new Date(at).toISOString(),
      `s${i % 50}`,
      page,
      ['rage_click', 'dead_click', 'scroll_bounce'][i % 3],
      rnd() < 0.7 ? `#el-${i % 7}` : SELECTORS[i % SELECTORS.length],
      v(),
      v(),
      p,
      half ? null : p,
      DEVICES[Math.floor(rnd() * 3)],
      environment,
    ]);
  }
  return rows;
}

async function insertSignals(h: DatabaseHandle, rows: unknown[][]): Promise<void> {
  for (let i = 0; i < rows.length; i += 2000) {
    const chunk = rows.slice(i, i + 2000);
    await sql`
      insert into signals (site_id, event_id, ts, session_id, page, signal_type, selector, vx, vy, px, py, device, environment)
      select (r->>0)::uuid, (r->>1)::uuid, (r->>2)::timestamptz, r->>3, r->>4, r->>5, r->>6, (r->>7)::smallint,
             (r->>8)::smallint, (r->>9)::smallint, (r->>10)::smallint, r->>11, r->>12
      from jsonb_array_elements(${JSON.stringify(chunk)}::jsonb) r`.execute(h.db);
  }
}

/** Selectors besides `#el-N`: none, empty (no `el`), and texts with quotes, backslashes, control and non-ASCII characters. */
const SELECTORS = [null, '', 'a[title="x\\y"]', 'tab\there\nnew\u0001\u001f', 'é 💥 \u2028', '</script>'];

const PAGES = { '/none': 0, '/few': 300, '/some': 1_400, '/many': 9_000, '/dense': 4_000 } as const;

async function check(t: import('ava').ExecutionContext, h: DatabaseHandle, runs: number): Promise<void> {
  const siteId = randomUUID();
  let seed = 1;
  for (const [page, n] of Object.entries(PAGES)) {
    await insertSignals(h, signalsOf(siteId, 'production', page, n, seed++, page === '/dense'));
  }
  // Another environment of one page: not counted with production's.
  await insertSignals(h, signalsOf(siteId, 'staging', '/many', 500, seed++));
  await rebuildPageHeatmapHours(h.db, siteId);
  let compared = 0;
  let sampled = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...(Object.keys(PAGES) as (keyof typeof PAGES)[])),
      fc.constantFrom(undefined, 'desktop' as const, 'mobile' as const),
      fc.constantFrom('production' as const, 'staging' as const),
      // The clock anywhere in the 12 days before NOW, on an hour (the window has no partial first hour) or not.
      fc.integer({ min: 0, max: 12 * 24 }),
      fc.oneof(fc.constant(0), fc.integer({ min: 1, max: HOUR_MS - 1 })),
      // Descents for every step, the default choice, or one walk for every step.
      fc.constantFrom(0, PAGE_HEATMAP_WALK_MAX_STEP, 1_000_000),
      async (page, device, environment, hours, ms, walkMaxStep) => {
        const now = new Date(Math.floor(NOW / HOUR_MS) * HOUR_MS - hours * HOUR_MS + ms);
        const s = { site_id: siteId, environment, page };
        const got = await sampledPageSignals(h.db, s, device, now, walkMaxStep);
        const want = await numberedPageSample(h.db, s, device, now);
        t.deepEqual(got, want, JSON.stringify({ page, device, environment, now, walkMaxStep }));
        // The route's answer text from the database: what JSON.stringify makes of the presented sample, byte for byte.
        const text = await pageHeatmapPoints(h.db, s, device, now, walkMaxStep);
        t.is(
          pageHeatmapAnswer(page, device ?? null, text.total, text.points).text,
          JSON.stringify(presentPageHeatmap(page, device ?? null, want.total, want.rows)),
        );
        compared++;
        if (want.total > 500) sampled++;
        return true;
      },
    ),
    { numRuns: runs, seed: 25 },
  );
  t.true(compared >= runs);
  t.true(sampled > 5, 'some windows hold more signals than points');
}

test('postgres: the sample from the hourly counts is the numbered sample', async (t) => {
  const d = await withTestDatabase('page_sample');
  try {
    await check(t, d.handle, 90);
  } finally {
    await d.close();
  }
});

test('pglite: the sample from the hourly counts is the numbered sample', async (t) => {
  const h = await openEmbeddedTestDatabase();
  try {
    // Fewer runs: the embedded database answers each pair of queries several times slower.
    await check(t, h, 30);
  } finally {
    await h.close();
  }
});
