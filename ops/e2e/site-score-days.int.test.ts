import test from 'ava';
import { sql } from 'kysely';
import type { DatabaseHandle } from '../../shared/db/connection.ts';
import { refreshSiteScoreDays, siteDayScores, storedScoreDays } from '../../shared/db/site-score-days.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { useTestDatabase } from '../../shared/testing/database.ts';
import { useResource } from '../../shared/testing/lifecycle.ts';
import { openEmbeddedTestDatabase } from '../../shared/testing/embedded-template.ts';
import { seeded } from '../../shared/seeded-random.ts';
import { upsertPageScores, type PageScoreWrite } from '../../processor/store/scores.store.ts';
import type { Environment } from '../../shared/domain/deploy-verification.ts';

// Rollup = raw for `site_score_days`: random rewrites of page days go through the processor's score writer
// (`upsertPageScores`), sessions sometimes falling to 0; every site day of the rollup must then equal the aggregate of
// `score_history` the scores baseline and the trends site line computed before they read the rollup (the same
// doubles), on PostgreSQL and on the embedded database, and equal a rebuild. Two writers of one site's day at once
// (processor partitions) must not leave a sum that misses either; TimescaleDB's retention must drop the same days.

// Serial: the comparisons read every site of the database.
const handles = {
  postgres: useTestDatabase(test, 'site_score_days'),
  pglite: useResource(test, openEmbeddedTestDatabase, (h) => h.close()),
};

const DAY = 86_400_000;
const NOW = Date.parse('2026-03-15T12:34:56.789Z');
const PAGES = ['/', '/cart', '/checkout', '/blog/a', '/blog/b'];

const write = (siteId: string, page: string, day: string, score: number, sessions: number): PageScoreWrite => ({
  siteId,
  page,
  windowStart: Date.parse(`${day}T10:00:00Z`),
  day,
  score,
  friction: score / 100,
  sessions,
  pageViews: sessions * 2,
  signalCount: sessions,
  dominantSignal: null,
  trend: 'stable',
  updatedAt: NOW,
});

/** The site's daily scores as the readers computed them from `score_history` before the rollup (their SQL). */
async function rawDayScores(h: DatabaseHandle, siteId: string, environment: string, fromDay: string) {
  const { rows } = await sql<{ date: string; score: number | null }>`
    select to_char(day, 'YYYY-MM-DD') as date,
           (sum(score * sessions) / nullif(sum(sessions), 0))::float8 as score
    from score_history
    where site_id = ${siteId} and environment = ${environment} and day >= ${fromDay}::date and sessions > 0
    group by day
    order by day`.execute(h.db);
  return rows.filter((r) => r.score !== null);
}

interface SiteDayRow {
  site_id: string;
  environment: Environment;
  day: string;
  weighted_sum: number;
  sessions: number;
}

/** Every row of the rollup and of the raw aggregate it must equal (days with sessions). */
async function rollupAndRaw(h: DatabaseHandle) {
  const rollup = await sql<SiteDayRow>`
    select site_id, environment, to_char(day, 'YYYY-MM-DD') as day, weighted_sum, sessions::float8 as sessions
    from site_score_days where sessions > 0 order by 1, 2, 3`.execute(h.db);
  const raw = await sql<SiteDayRow>`
    select site_id, environment, to_char(day, 'YYYY-MM-DD') as day, sum(score * sessions) as weighted_sum,
           sum(sessions)::float8 as sessions
    from score_history where sessions > 0 group by 1, 2, 3 order by 1, 2, 3`.execute(h.db);
  return { rollup: rollup.rows, raw: raw.rows };
}

for (const name of ['postgres', 'pglite'] as const) {
  test.serial(
    `${name}: site_score_days equals the aggregate of score_history after the processor's writes`,
    async (t) => {
      const h = handles[name];
      const orgId = await insertOrg(h.db, { name: 'site days' });
      const sites = [
        (await provisionSite(h.db, { orgId, name: 'a', url: 'https://a.example' })).siteId,
        (await provisionSite(h.db, { orgId, name: 'b', url: 'https://b.example' })).siteId,
      ];
      const rnd = seeded(25);
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
      for (let w = 0; w < 40; w++) {
        const environment = pick<Environment>(['production', 'production', 'staging']);
        const rows = new Map<string, PageScoreWrite>();
        for (let i = 0; i < 1 + Math.floor(rnd() * 12); i++) {
          const siteId = pick(sites);
          const page = pick(PAGES);
          const day = new Date(NOW - Math.floor(rnd() * 40) * DAY).toISOString().slice(0, 10);
          // Scores with decimals (real), sessions sometimes 0: a rewrite can take a page, or a whole day, out.
          const sessions = rnd() < 0.2 ? 0 : 1 + Math.floor(rnd() * 300);
          rows.set(
            `${siteId} ${page} ${day}`,
            write(siteId, page, day, Math.round(rnd() * 1000) / 10 + rnd() / 7, sessions),
          );
        }
        await upsertPageScores(h.db, environment, [...rows.values()]);
      }
      // One site day whose every page falls to 0 sessions: the raw aggregate has no row for it, the readers no day.
      const emptied = (
        (await rollupAndRaw(h)).raw as { site_id: string; environment: Environment; day: string }[]
      ).find((r) => r.site_id === sites[0])!;
      await upsertPageScores(
        h.db,
        emptied.environment,
        PAGES.map((page) => write(emptied.site_id, page, emptied.day, 50, 0)),
      );
      const { rollup, raw } = await rollupAndRaw(h);
      t.true(raw.length > 40, `${raw.length} site days`);
      t.deepEqual(rollup, raw);
      t.false(
        raw.some(
          (r) => r.site_id === emptied.site_id && r.environment === emptied.environment && r.day === emptied.day,
        ),
      );
      // The readers' answers: the rollup's against the raw SQL they ran before, for the 7, 30 and 90-day windows.
      for (const siteId of sites)
        for (const environment of ['production', 'staging'])
          for (const days of [7, 30, 90]) {
            const from = new Date(NOW - (days - 1) * DAY).toISOString().slice(0, 10);
            t.deepEqual(
              await siteDayScores(h.db, siteId, environment, from),
              await rawDayScores(h, siteId, environment, from),
            );
          }
      // The incremental rollup is the rebuilt one (what migration 0350 builds).
      const before = await sql`select * from site_score_days order by 1, 2, 3`.execute(h.db);
      await sql`delete from site_score_days`.execute(h.db);
      await refreshSiteScoreDays(h.db, await storedScoreDays(h.db));
      t.deepEqual((await sql`select * from site_score_days order by 1, 2, 3`.execute(h.db)).rows, before.rows);

      if (name === 'pglite') {
        // Retention: score_history's TimescaleDB policy drops whole chunks; the rollup's drops the same days.
        await sql`select drop_chunks('score_history', older_than => ${new Date(NOW - 20 * DAY).toISOString().slice(0, 10)}::date)`.execute(
          h.db,
        );
        await sql`select drop_chunks('site_score_days', older_than => ${new Date(NOW - 20 * DAY).toISOString().slice(0, 10)}::date)`.execute(
          h.db,
        );
        const after = await rollupAndRaw(h);
        t.true(after.raw.length < raw.length, 'retention dropped days');
        t.deepEqual(after.rollup, after.raw);
      }
    },
  );
}

test.serial('postgres: two writers of one site day at once leave the sum of both', async (t) => {
  const h = handles.postgres;
  const orgId = await insertOrg(h.db, { name: 'site days concurrent' });
  const { siteId } = await provisionSite(h.db, { orgId, name: 'c', url: 'https://c.example' });
  const day = new Date(NOW).toISOString().slice(0, 10);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let wrote!: () => void;
  const written = new Promise<void>((resolve) => (wrote = resolve));
  const first = h.db.transaction().execute(async (trx) => {
    await upsertPageScores(trx, 'production', [write(siteId, '/a', day, 12.5, 10)]);
    wrote();
    await held;
  });
  await written;
  // The second writer's page is another row of score_history, but the same site day: it waits for the first to commit.
  const second = upsertPageScores(h.db, 'production', [write(siteId, '/b', day, 40.25, 30)]);
  await new Promise((resolve) => setTimeout(resolve, 300));
  release();
  await Promise.all([first, second]);
  const rows = await sql<{ weighted_sum: number; sessions: number }>`
    select weighted_sum, sessions from site_score_days where site_id = ${siteId}`.execute(h.db);
  t.deepEqual(rows.rows, [{ weighted_sum: 12.5 * 10 + 40.25 * 30, sessions: 40 }]);
});
