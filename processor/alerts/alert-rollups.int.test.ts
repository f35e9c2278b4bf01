import test from 'ava';
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { openDatabase, type DatabaseHandle } from '../../shared/db/connection.ts';
import type { Database } from '../../shared/db/database.ts';
import * as rollupsMigration from '../../shared/db/migrations/0270_alert_page_rollups.ts';
import { createTestDatabase } from '../../shared/testing/database.ts';
import { pageObservations, pagesToEvaluate } from '../store/alerts.store.ts';
import { openEmbeddedTestDatabase } from '../../shared/testing/embedded-template.ts';
import { seedAlertScale } from '../../ops/testing/alert-scale.ts';

// The rollups page_scores' trigger keeps (migration 0270) against the same facts computed from the raw rows, on both
// databases, after writes of every shape the processor and an operator make: bulk inserts, upserts rewriting the
// latest hour and older ones, plain updates, hours arriving out of order, staging rows, many pages per statement.
const BACKENDS = ['postgres', 'pglite'] as const;
const opened = new Map<string, { handle: DatabaseHandle; drop?: () => Promise<void> }>();

test.before(async () => {
  const scratch = await createTestDatabase('alert_rollups');
  opened.set('postgres', { handle: await openDatabase({ url: scratch.url, dataDir: '' }), drop: scratch.drop });
  opened.set('pglite', { handle: await openEmbeddedTestDatabase() });
});
test.after.always(async () => {
  for (const { handle, drop } of opened.values()) await handle.close().then(() => drop?.());
});

const HOUR = 3600_000;
const WEEKS = 8;
const anomaly = { minWeeks: 3, minSessions: 5 };

interface Row {
  page: string;
  hour: number;
  score: number;
  sessions: number;
  environment?: string;
}

/** One statement writing these rows as the processor does (insert, or on conflict the new values). */
async function upsert(db: Kysely<Database>, siteId: string, base: number, rows: readonly Row[]): Promise<void> {
  await sql`
    insert into page_scores (site_id, environment, page, window_start, score, friction, sessions, page_views,
                             signal_count, dominant_signal, trend, updated_at)
    select ${siteId}, r.env, r.page, r.ws, r.score, 0.1, r.sessions, 1, 0, null, 'stable', now()
    from unnest(${rows.map((r) => r.environment ?? 'production')}::text[], ${rows.map((r) => r.page)}::text[],
                ${rows.map((r) => new Date(base + r.hour * HOUR).toISOString())}::timestamptz[],
                ${rows.map((r) => r.score)}::real[], ${rows.map((r) => r.sessions)}::int[]) as r(env, page, ws, score, sessions)
    on conflict (site_id, environment, page, window_start) do update set score = excluded.score, sessions = excluded.sessions`.execute(
    db,
  );
}

/** The facts from page_scores itself: latest, previous, first, the weekly samples and the 24 hours before the latest. */
async function fromRawRows(db: Kysely<Database>, siteId: string) {
  const { rows } = await sql<{
    page: string;
    score: number;
    sessions: number;
    latest: Date;
    previous: number | null;
    first: Date;
    weekly: string | null;
    day: string | null;
  }>`
    select p.page, cur.score, cur.sessions, cur.window_start as latest, prev.score as previous, first.window_start as first,
      (select string_agg(s.score || '/' || s.sessions, ',' order by s.window_start) from generate_series(1, ${WEEKS}::int) k(n)
         join page_scores s on s.site_id = ${siteId} and s.environment = 'production' and s.page = p.page
          and s.window_start = cur.window_start - k.n * interval '7 days') as weekly,
      (select string_agg(s.score || '/' || s.sessions, ',' order by s.window_start) from page_scores s
        where s.site_id = ${siteId} and s.environment = 'production' and s.page = p.page
          and s.window_start >= cur.window_start - interval '1 day' and s.window_start < cur.window_start) as day
    from (select distinct page from page_scores where site_id = ${siteId} and environment = 'production') p
    cross join lateral (select score, sessions, window_start from page_scores s where s.site_id = ${siteId}
      and s.environment = 'production' and s.page = p.page order by window_start desc limit 1) cur
    left join lateral (select score from page_scores s where s.site_id = ${siteId} and s.environment = 'production'
      and s.page = p.page and s.window_start < cur.window_start order by window_start desc limit 1) prev on true
    cross join lateral (select window_start from page_scores s where s.site_id = ${siteId}
      and s.environment = 'production' and s.page = p.page order by window_start asc limit 1) first
    order by p.page`.execute(db);
  return rows.map((r) => {
    const samples = (text: string | null) =>
      (text ?? '')
        .split(',')
        .filter(Boolean)
        .map((x) => x.split('/').map(Number))
        .map(([score, sessions]) => ({ score: score!, sessions: sessions! }));
    const weekly = samples(r.weekly);
    const enoughWeeks = weekly.filter((x) => x.sessions >= anomaly.minSessions).length >= anomaly.minWeeks;
    return {
      page: r.page,
      score: Number(r.score),
      sessions: r.sessions,
      windowStart: new Date(r.latest).getTime(),
      previous: r.previous === null ? null : Number(r.previous),
      firstSeen: new Date(r.first).getTime(),
      weekly,
      // Read only where the band uses them: while the weekly samples are too few.
      last24h: enoughWeeks ? [] : samples(r.day),
    };
  });
}

async function fromRollups(db: Kysely<Database>, siteId: string, pages: readonly string[]) {
  return (await pageObservations(db, siteId, pages, anomaly)).sort((a, b) => a.page.localeCompare(b.page));
}

/** A deterministic pseudo-random sequence (the same writes on both databases and every run). */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

for (const name of BACKENDS) {
  test(`${name}: the kept latest/previous/first hours and anomaly samples equal those computed from page_scores`, async (t) => {
    const db = opened.get(name)!.handle.db;
    const siteId = randomUUID();
    const base = Math.floor(Date.now() / HOUR) * HOUR - 10 * 168 * HOUR;
    const pages = ['/a', '/b', '/c', '/d', '/thin'];
    // 10 weeks of hours for /a and /b in one statement (many pages and hours of the week at once).
    await upsert(
      db,
      siteId,
      base,
      ['/a', '/b'].flatMap((page, p) =>
        Array.from({ length: 10 * 168 }, (_, h) => ({
          page,
          hour: h,
          score: 20 + ((h * 7 + p) % 13),
          sessions: 3 + (h % 9),
        })),
      ),
    );
    // /c: two weeks only (the rolling 24 h baseline), its hours arriving newest first, one statement each.
    for (let h = 10 * 168 - 1; h >= 8 * 168; h -= 1 + (h % 3))
      await upsert(db, siteId, base, [{ page: '/c', hour: h, score: (h % 17) + 5, sessions: 6 }]);
    // Staging rows never count: a staging hour newer than any production one.
    await upsert(db, siteId, base, [
      { page: '/a', hour: 10 * 168 + 5, score: 99, sessions: 50, environment: 'staging' },
    ]);
    await upsert(db, siteId, base, [{ page: '/staging-only', hour: 3, score: 1, sessions: 9, environment: 'staging' }]);
    // Random rewrites and new hours: latest, previous, older, out of order; several pages per statement.
    const next = random(name.length);
    for (let i = 0; i < 60; i++) {
      const rows: Row[] = [];
      const seen = new Set<string>();
      for (let k = 0; k < 1 + Math.floor(next() * 6); k++) {
        const page = pages[Math.floor(next() * pages.length)]!;
        const hour = 9 * 168 + Math.floor(next() * (168 + 30));
        if (seen.has(`${page}@${hour}`)) continue; // one statement writes a row once
        seen.add(`${page}@${hour}`);
        rows.push({ page, hour, score: Math.round(next() * 1000) / 10, sessions: Math.floor(next() * 12) });
      }
      await upsert(db, siteId, base, rows);
      if (i % 10 === 0)
        // A plain update, as an operator's fix would be: every /b hour of one day.
        await sql`update page_scores set score = score + 1, sessions = sessions + 1
                  where site_id = ${siteId} and page = '/b' and window_start >= ${new Date(base + (9 * 168 + i) * HOUR)}
                    and window_start < ${new Date(base + (9 * 168 + i + 24) * HOUR)}`.execute(db);
    }
    const raw = await fromRawRows(db, siteId);
    t.deepEqual(
      raw.map((r) => r.page),
      pages,
    );
    t.true(raw.some((r) => r.last24h.length > 0) && raw.some((r) => r.weekly.length === WEEKS), 'both baselines occur');
    t.deepEqual(await fromRollups(db, siteId, [...pages, '/staging-only', '/never']), raw, 'kept by the trigger');
    // The migration's backfill of a history stored before it gives the same.
    await db.transaction().execute(async (trx) => {
      await rollupsMigration.down(trx);
      await rollupsMigration.up(trx);
    });
    t.deepEqual(await fromRollups(db, siteId, [...pages, '/staging-only', '/never']), raw, 'backfilled');
    // The pages a tick evaluates: scored in production since a time.
    const since = new Date(base + (10 * 168 + 10) * HOUR);
    t.deepEqual(
      (await pagesToEvaluate(db, siteId, since)).sort(),
      raw.filter((r) => r.windowStart >= since.getTime()).map((r) => r.page),
    );
    // Emptied with page_scores.
    await sql`truncate page_scores`.execute(db);
    t.deepEqual(await fromRollups(db, siteId, pages), []);
  });
}

test('postgres: the scale seeder writes the rollups the trigger would (it writes page_scores without the trigger)', async (t) => {
  const db = opened.get('postgres')!.handle.db;
  const now = Date.now();
  const tables = async (siteId: string) => {
    const { rows: marks } = await sql`select page, first_start, latest_start, latest_score, latest_sessions,
        previous_start, previous_score, week_scores, week_sessions
      from alert_page_marks where site_id = ${siteId} order by page`.execute(db);
    const { rows: hours } = await sql`select page, hour_of_week, starts, scores, sessions
      from alert_page_week_hours where site_id = ${siteId} order by page, hour_of_week`.execute(db);
    return { marks, hours };
  };
  // Less than a week, a few weeks, more than the 8 kept.
  for (const hours of [1, 30, 3 * 168 + 5, 10 * 168 + 7]) {
    const orgId = randomUUID();
    const siteId = randomUUID();
    await db.insertInto('orgs').values({ id: orgId, name: 'o' }).execute();
    await db.insertInto('sites').values({ id: siteId, org_id: orgId, name: 's', url: 'https://s.test' }).execute();
    await seedAlertScale(db, { siteId, pages: 4, hours, now });
    const seeded = await tables(siteId);
    t.is(seeded.marks.length, 4);
    t.is(seeded.hours.length, 4 * Math.min(hours, 168));
    // The trigger's own: the same rows written again, every page new to the rollups.
    await sql`delete from alert_page_marks where site_id = ${siteId}`.execute(db);
    await sql`delete from alert_page_week_hours where site_id = ${siteId}`.execute(db);
    await sql`update page_scores set score = score where site_id = ${siteId}`.execute(db);
    t.deepEqual(seeded, await tables(siteId), `${hours} hours`);
  }
});
