import test from 'ava';
import fc from 'fast-check';
import { sql } from 'kysely';
import { openDatabase, type DatabaseHandle } from '../../shared/db/connection.ts';
import { round1 } from '../../shared/domain/score-summary.ts';
import { serializeJson } from '../../shared/http/json-text.ts';
import { applySiteRetention } from '../../shared/tenancy/retention.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { createTestDatabase } from '../../shared/testing/database.ts';
import { openEmbeddedTestDatabase } from '../../shared/testing/embedded-template.ts';
import { seeded } from '../../shared/seeded-random.ts';
import { upsertPageScores, type PageScoreWrite } from '../../processor/store/scores.store.ts';
import { round1JsonSql } from './scores.queries.ts';
import { siteScores, siteScoresAnswer } from './site-scores.ts';

// The scores route's answer, its pages written as JSON text by the database (siteScoresAnswer), against the same site
// object built in JavaScript from the pages' rows (siteScores, the route's code before) and stringified: the same
// bytes, on PostgreSQL and on the embedded database.

const handles = new Map<'postgres' | 'pglite', DatabaseHandle>();
let dropPostgres: (() => Promise<void>) | undefined;
test.before(async () => {
  const scratch = await createTestDatabase('site_scores');
  dropPostgres = scratch.drop;
  handles.set('postgres', await openDatabase({ url: scratch.url, dataDir: '' }));
  handles.set('pglite', await openEmbeddedTestDatabase());
});
test.after.always(async () => {
  for (const h of handles.values()) await h.close();
  await dropPostgres?.();
});

const NOW = new Date('2026-03-15T12:34:56.789Z');
const HOUR = 3_600_000;
// Names JSON.stringify escapes (quote, backslash, control characters), non-ASCII, and names equal but for case and
// accents (the order is the database's collation, the same for both paths).
const PAGES = [
  '/',
  '/cart',
  '/Cart',
  '/café',
  '/cafe',
  '/say "hi"',
  '/back\\slash',
  '/tab\there',
  '/line\nbreak',
  '/bell\u0007\u001f\u007f',
  '/emoji/😀',
  '/\u2028\u2029',
  '/日本語',
];

/** Hourly rows over 9 days (two before the 7-day window) for every page, scores from the whole float4 range used. */
function rowsOf(siteId: string, seed: number): PageScoreWrite[] {
  const rand = seeded(seed);
  const rows: PageScoreWrite[] = [];
  for (const [i, page] of PAGES.entries()) {
    for (let h = 0; h < 9 * 24; h += 1 + Math.floor(rand() * 20)) {
      const windowStart = Math.floor(NOW.getTime() / HOUR) * HOUR - h * HOUR;
      // Halves of a tenth (x.x5), integers, tiny and negative values, and plain random scores.
      const kind = Math.floor(rand() * 6);
      const score =
        kind === 0
          ? Math.floor(rand() * 1000) / 10 + 0.05
          : kind === 1
            ? Math.floor(rand() * 101)
            : kind === 2
              ? rand() * 1e-3
              : kind === 3
                ? -rand() * 5
                : rand() * 100;
      rows.push({
        siteId,
        page,
        windowStart,
        day: new Date(windowStart).toISOString().slice(0, 10),
        score,
        friction: rand(),
        // Pages with no sessions leave the overall score.
        sessions: i % 5 === 4 ? 0 : Math.floor(rand() * 500),
        pageViews: 1,
        signalCount: 1,
        dominantSignal: rand() < 0.3 ? null : ['rage_click', 'dead_click', 'x"\\y'][Math.floor(rand() * 3)],
        trend: ['up', 'down', 'stable'][Math.floor(rand() * 3)],
        updatedAt: windowStart + 1000,
      });
    }
  }
  return rows;
}

/** As the processor writes them: one statement per hour, its day's history row rewritten each time. */
async function writeHourly(h: DatabaseHandle, environment: 'production' | 'staging', rows: PageScoreWrite[]) {
  const hours = [...new Set(rows.map((r) => r.windowStart))].sort((a, b) => a - b);
  for (const hour of hours)
    await upsertPageScores(
      h.db,
      environment,
      rows.filter((r) => r.windowStart === hour),
    );
}

for (const name of ['postgres', 'pglite'] as const) {
  test(`${name}: the scores answer with the pages' JSON text from the database is the answer built in JavaScript`, async (t) => {
    const h = handles.get(name)!;
    const orgId = await insertOrg(h.db, { name: 'scores' });
    const { siteId } = await provisionSite(h.db, { orgId, name: 'scores', url: 'https://scores.example' });
    const { siteId: emptySite } = await provisionSite(h.db, { orgId, name: 'empty', url: 'https://empty.example' });
    await writeHourly(h, 'production', rowsOf(siteId, 1));
    await writeHourly(h, 'staging', rowsOf(siteId, 2).slice(0, 40));

    const same = async (label: string, site: string, at: Date) => {
      let pages = 0;
      for (const environment of ['production', 'staging'] as const) {
        const before = await siteScores(h.db, site, environment, at);
        const after = await siteScoresAnswer(h.db, site, environment, at);
        // As the route answers it: the site object as `data` and as `data.site`.
        t.is(serializeJson({ data: { ...after, site: after } }), JSON.stringify({ data: { ...before, site: before } }));
        t.deepEqual(JSON.parse(JSON.stringify(after)), JSON.parse(JSON.stringify(before)), `${label} ${environment}`);
        pages += before.pages.length;
      }
      return pages;
    };
    t.true((await same('site', siteId, NOW)) > PAGES.length, 'both environments have pages');
    // Later clocks: pages leave the 7-day window, then the site has none in it.
    t.true((await same('a day later', siteId, new Date(NOW.getTime() + 30 * HOUR))) > 0);
    t.is(await same('ten days later', siteId, new Date(NOW.getTime() + 10 * 24 * HOUR)), 0);
    t.is(await same('empty site', emptySite, NOW), 0);
    t.is(await same('unknown site', '00000000-0000-4000-8000-000000000000', NOW), 0);
    const overall = (await siteScoresAnswer(h.db, siteId, 'production', NOW)).overall_score;
    t.not(overall, 0, 'the overall score is weighted over pages with sessions');

    // Erasure's recompute rewrites the current hour of the pages (upserts); retention deletes no page_scores row
    // (events, signals and sessions only). The answer follows the rewritten rows.
    const rewritten = rowsOf(siteId, 3).filter((r) => r.windowStart === Math.floor(NOW.getTime() / HOUR) * HOUR);
    await writeHourly(h, 'production', rewritten);
    t.not((await siteScoresAnswer(h.db, siteId, 'production', NOW)).overall_score, overall, 'the rewrite shows');
    t.true((await same('after a rewrite', siteId, NOW)) > PAGES.length);
    await h.db.updateTable('sites').set({ retention_days: 31 }).where('id', '=', siteId).execute();
    await applySiteRetention(h.db, [siteId], new Date(NOW.getTime() + 30 * 24 * HOUR));
    t.true((await same('after retention', siteId, NOW)) > PAGES.length);
  });

  test(`${name}: round1 in SQL writes what JSON.stringify writes of round1, for random doubles and floats`, async (t) => {
    const h = handles.get(name)!;
    // Below 1e15 (the notations part above; a score is 0-100); the float4 values are what page_scores holds.
    const finite = (x: number) => Math.abs(x) < 1e14;
    const xs = [
      ...fc.sample(fc.double({ min: -1e14, max: 1e14, noNaN: true }), { numRuns: 4000, seed: 1 }),
      ...fc.sample(fc.float({ noNaN: true }), { numRuns: 4000, seed: 2 }).filter(finite),
      ...fc.sample(fc.integer({ min: -100_000, max: 100_000 }), { numRuns: 2000, seed: 3 }).map((k) => k / 100 + 0.05),
      ...fc
        .sample(fc.integer({ min: 0, max: 1000 }), { numRuns: 1000, seed: 4 })
        .map((k) => Math.fround(k / 10 + 0.05)),
      0,
      -0,
      0.05,
      -0.05,
      0.04999999999999999,
      0.049999999999999996,
      0.15,
      0.25,
      0.35,
      99.95,
      100,
      1e-300,
      -1e-300,
      5e-324,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
    ];
    const { rows } = await sql<{ json: string }>`
      select ${round1JsonSql(sql`x`)} as json
      from unnest(${`{${xs.map((x) => (Object.is(x, -0) ? '-0' : String(x))).join(',')}}`}::float8[]) with ordinality as u(x, i) order by i`.execute(
      h.db,
    );
    t.is(rows.length, xs.length);
    const wrong = xs.filter((x, i) => rows[i].json !== JSON.stringify(round1(x)));
    t.deepEqual(wrong, []);
  });

  test(`${name}: to_json writes a string as JSON.stringify does`, async (t) => {
    const h = handles.get(name)!;
    // Any text PostgreSQL stores: no NUL, no lone surrogate.
    const strings = fc
      .sample(fc.string({ unit: 'binary', maxLength: 12 }), { numRuns: 3000, seed: 5 })
      .map((s) => s.replaceAll('\u0000', ''))
      .filter((s) => s.isWellFormed());
    strings.push(...Array.from({ length: 0x80 }, (_, c) => `a${String.fromCharCode(c || 1)}b`));
    const { rows } = await sql<{ json: string }>`
      select to_json(s)::text as json from unnest(${strings}::text[]) with ordinality as u(s, i) order by i`.execute(
      h.db,
    );
    t.deepEqual(
      rows.map((r) => r.json),
      strings.map((s) => JSON.stringify(s)),
    );
  });
}
