import test, { type ExecutionContext } from 'ava';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { useTestDatabase } from '../../shared/testing/database.ts';
import { useResource } from '../../shared/testing/lifecycle.ts';
import { openEmbeddedTestDatabase } from '../../shared/testing/embedded-template.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { upsertPageScores } from '../../processor/store/scores.store.ts';
import { hourlyScoreRows, writeHourly, writeTwoSites } from '../testing/page-score-rows.ts';
import { refreshSiteScoreDays } from '../../shared/db/site-score-days.ts';
import { encodeJson } from '../../shared/http/conditional-get.ts';
import { ok } from '../../shared/http/envelope.ts';
import type { Environment } from '../../shared/domain/deploy-verification.ts';
import { siteScores } from '../../api/read-models/site-scores.ts';
import { ScoresAnswerCache, type AnswerSource } from '../../api/read-models/scores-answer-cache.ts';

// The scores answer kept in memory (scores-answer-cache.ts, migration 0400) against the answer computed afresh: after
// every kind of write to the tables it reads (the processor's score write, which its batches, its tick, erasure's
// rewrite, recompute and the demo derive all go through; plain statements as a migration or a site's deletion would
// run them; TRUNCATE; retention), after the clock crosses the hour a page leaves the window and the day, between sites
// and environments, and within its byte bound. On PostgreSQL and on the embedded PGlite+TimescaleDB.

const handles = {
  postgres: useTestDatabase(test, 'scores_cache'),
  pglite: useResource(test, openEmbeddedTestDatabase, (h) => h.close()),
};

const NOW = new Date('2026-03-15T12:34:56.789Z').getTime();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const THIS_HOUR = Math.floor(NOW / HOUR) * HOUR;
const PAGES = ['/', '/cart', '/checkout', '/a"b', '/ü'];

const rowsOf = (siteId: string, seed: number, pages = PAGES, from = THIS_HOUR) =>
  hourlyScoreRows(siteId, seed, pages, from);

/** What the route answered before the cache: the site object, as `data` and `data.site`, in the envelope. */
async function fresh(db: Kysely<Database>, siteId: string, environment: Environment, at: Date) {
  const site = await siteScores(db, siteId, environment, at);
  return encodeJson(ok({ ...site, site }));
}

/** The cache's answer equals the fresh one (bytes and ETag); where it came from. */
async function check(
  t: ExecutionContext,
  cache: ScoresAnswerCache,
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  at: Date,
): Promise<AnswerSource> {
  const { body, source } = await cache.answer(db, siteId, environment, at);
  const expected = await fresh(db, siteId, environment, at);
  t.true(body.json.equals(expected.json), `${source} answer differs at ${at.toISOString()}`);
  t.is(body.etag, expected.etag);
  return source;
}

/** After a write: the next answer is computed, the one after it served from memory, both equal to fresh ones. */
async function recomputedThenStored(what: string, ...args: Parameters<typeof check>) {
  args[0].is(await check(...args), 'computed', what);
  args[0].is(await check(...args), 'stored', what);
}

const pagesOf = (body: { json: Buffer }) =>
  (JSON.parse(body.json.toString()) as { data: { pages: { page: string }[] } }).data.pages.map((p) => p.page);

for (const name of ['postgres', 'pglite'] as const) {
  test(`${name}: a stored scores answer equals a fresh computation after every kind of write`, async (t) => {
    const { db } = handles[name];
    const orgId = await insertOrg(db, { name: 'cache' });
    const { siteId, other } = await writeTwoSites(db, orgId, PAGES, THIS_HOUR);
    const cache = new ScoresAnswerCache();
    const at = new Date(NOW);
    await recomputedThenStored('first read', t, cache, db, siteId, 'production', at);

    // The processor's write of the current hour (a batch, the tick's rescoring, erasure's or recompute's rewrite).
    await writeHourly(
      db,
      'production',
      rowsOf(siteId, 4).filter((r) => r.windowStart === THIS_HOUR),
    );
    await recomputedThenStored('current hour rewritten', t, cache, db, siteId, 'production', at);
    // An older hour written late: the current rows stay, the baseline's day changes.
    await writeHourly(
      db,
      'production',
      rowsOf(siteId, 5, ['/cart'])
        .slice(0, 1)
        .map((r) => ({
          ...r,
          windowStart: THIS_HOUR - 50 * HOUR,
          day: new Date(THIS_HOUR - 50 * HOUR).toISOString().slice(0, 10),
        })),
    );
    await recomputedThenStored('older hour', t, cache, db, siteId, 'production', at);

    // Writes of another site and of another environment leave this answer stored (and right).
    await writeHourly(db, 'production', rowsOf(other, 6, ['/other']));
    await writeHourly(db, 'staging', rowsOf(siteId, 7, ['/cart']));
    t.is(await check(t, cache, db, siteId, 'production', at), 'stored');

    // Plain statements, as a migration, a site's deletion or erasure's rewrite would run them.
    await sql`delete from page_scores where site_id = ${siteId} and environment = 'production' and page = '/checkout'`.execute(
      db,
    );
    await recomputedThenStored('a page deleted', t, cache, db, siteId, 'production', at);
    await sql`update page_scores set score = score + 1 where site_id = ${siteId} and environment = 'production'
              and window_start = (select max(window_start) from page_scores where site_id = ${siteId} and environment = 'production')`.execute(
      db,
    );
    await recomputedThenStored('an update of page_scores', t, cache, db, siteId, 'production', at);
    await sql`update score_history set sessions = sessions + 7 where site_id = ${siteId} and environment = 'production'
              and day = ${new Date(NOW - 3 * DAY).toISOString().slice(0, 10)}::date`.execute(db);
    await refreshSiteScoreDays(db, [
      { siteId, environment: 'production', day: new Date(NOW - 3 * DAY).toISOString().slice(0, 10) },
    ]);
    await recomputedThenStored('a day recomputed', t, cache, db, siteId, 'production', at);
    // Retention of old days as a DELETE (plain PostgreSQL's way; TimescaleDB's chunk drops: the next test).
    await sql`delete from site_score_days where site_id = ${siteId} and environment = 'production'
              and day < ${new Date(NOW - 5 * DAY).toISOString().slice(0, 10)}::date`.execute(db);
    await recomputedThenStored('old days deleted', t, cache, db, siteId, 'production', at);
    // A write rolled back changes nothing: the answer stays stored.
    await db
      .transaction()
      .execute(async (trx) => {
        await upsertPageScores(trx, 'production', rowsOf(siteId, 8).slice(0, 3));
        throw new Error('rolled back');
      })
      .catch(() => {});
    t.is(await check(t, cache, db, siteId, 'production', at), 'stored');
    // TRUNCATE fires no row trigger: its statement trigger gives every key a new version.
    await recomputedThenStored('other site', t, cache, db, other, 'production', at);
    await db.transaction().execute(async (trx) => {
      await sql`truncate page_current_scores`.execute(trx);
      // Rebuilt as migration 0360 built it, so the rest of the test has current rows.
      await sql`insert into page_current_scores (site_id, environment, page, window_start, score, sessions, dominant_signal, trend, updated_at)
        select distinct on (site_id, environment, page) site_id, environment, page, window_start, score, sessions, dominant_signal, trend, updated_at
        from page_scores order by site_id, environment, page, window_start desc`.execute(trx);
    });
    await recomputedThenStored('truncated', t, cache, db, siteId, 'production', at);
    t.is(await check(t, cache, db, other, 'production', at), 'computed');
  });

  test(`${name}: a stored scores answer follows the clock across the hour a page leaves the window and the day`, async (t) => {
    const { db } = handles[name];
    const orgId = await insertOrg(db, { name: 'clock' });
    const { siteId } = await provisionSite(db, { orgId, name: 'a', url: 'https://a.example' });
    await writeHourly(db, 'production', rowsOf(siteId, 11, ['/', '/cart']));
    // A page whose only row is 160 hours old: it leaves the 7-day window at THIS_HOUR + 8 h (the same day).
    const leaves = THIS_HOUR + 8 * HOUR;
    await writeHourly(db, 'production', rowsOf(siteId, 12, ['/old'], leaves - 7 * DAY).slice(0, 1));
    const cache = new ScoresAnswerCache();
    await recomputedThenStored('first read', t, cache, db, siteId, 'production', new Date(NOW));
    // Up to the last millisecond the page is in the window, the stored answer holds.
    t.is(await check(t, cache, db, siteId, 'production', new Date(leaves - 1)), 'stored');
    t.is(await check(t, cache, db, siteId, 'production', new Date(leaves)), 'stored');
    t.true(pagesOf((await cache.answer(db, siteId, 'production', new Date(leaves))).body).includes('/old'));
    // One millisecond later it is not: computed again, without the page.
    t.is(await check(t, cache, db, siteId, 'production', new Date(leaves + 1)), 'computed');
    const after = (await cache.answer(db, siteId, 'production', new Date(leaves + 1))).body;
    t.false(pagesOf(after).includes('/old'));
    t.is(await check(t, cache, db, siteId, 'production', new Date(leaves + HOUR)), 'stored');
    // A clock that goes back: computed (the interval starts at the computation's instant).
    t.is(await check(t, cache, db, siteId, 'production', new Date(NOW - HOUR)), 'computed');
    // The day: the baseline's 7 days move at midnight (a new key).
    const midnight = Date.parse('2026-03-16T00:00:00.000Z');
    await recomputedThenStored('before midnight', t, cache, db, siteId, 'production', new Date(midnight - 1));
    await recomputedThenStored('midnight', t, cache, db, siteId, 'production', new Date(midnight));
    t.is(await check(t, cache, db, siteId, 'production', new Date(midnight - 1)), 'stored');
  });

  test(`${name}: stored answers are per site and environment, and bounded in bytes`, async (t) => {
    const { db } = handles[name];
    const orgA = await insertOrg(db, { name: 'tenant a' });
    const orgB = await insertOrg(db, { name: 'tenant b' });
    const sites = [
      (await provisionSite(db, { orgId: orgA, name: 'a', url: 'https://a.example' })).siteId,
      (await provisionSite(db, { orgId: orgB, name: 'b', url: 'https://b.example' })).siteId,
      (await provisionSite(db, { orgId: orgB, name: 'c', url: 'https://c.example' })).siteId,
    ];
    for (const [i, siteId] of sites.entries()) {
      await writeHourly(db, 'production', rowsOf(siteId, 20 + i));
      await writeHourly(db, 'staging', rowsOf(siteId, 30 + i, ['/', '/staging']));
    }
    const at = new Date(NOW);
    const unbounded = new ScoresAnswerCache();
    const bodies = new Map<string, Buffer>();
    for (const siteId of sites)
      for (const environment of ['production', 'staging'] as const) {
        await recomputedThenStored(`${siteId} ${environment}`, t, unbounded, db, siteId, environment, at);
        bodies.set(`${siteId} ${environment}`, (await unbounded.answer(db, siteId, environment, at)).body.json);
      }
    // Six different answers, each served to its own key only.
    t.is(new Set([...bodies.values()].map((b) => b.toString())).size, 6);
    t.is(unbounded.size, 6);
    // Room for one answer at a time: never more bytes than the bound, the least recently used go first (ByteLru's
    // own test has the order of several).
    const largest = Math.max(...[...bodies.values()].map((b) => b.length));
    const bound = largest + 400;
    const bounded = new ScoresAnswerCache(bound);
    for (const siteId of sites)
      for (const environment of ['production', 'staging'] as const) {
        await check(t, bounded, db, siteId, environment, at);
        t.true(bounded.bytes <= bound);
        t.true(bounded.size <= 1);
      }
    t.is(await check(t, bounded, db, sites[2], 'staging', at), 'stored');
    t.is(await check(t, bounded, db, sites[0], 'production', at), 'computed');
    // A bound below one answer stores nothing, and still answers right.
    const tiny = new ScoresAnswerCache(1000);
    t.is(await check(t, tiny, db, sites[0], 'production', at), 'computed');
    t.is(await check(t, tiny, db, sites[0], 'production', at), 'computed');
    t.is(tiny.bytes, 0);
  });
}

test('pglite: TimescaleDB retention drops of site_score_days chunks never leave a stored answer behind', async (t) => {
  const { db } = handles.pglite;
  // The policy the cache's retention rule assumes (migration 0350).
  const policy = await sql<{ drop_after: string }>`
    select config->>'drop_after' as drop_after from timescaledb_information.jobs
    where hypertable_name = 'site_score_days' and proc_name = 'policy_retention'`.execute(db);
  t.is(policy.rows[0]?.drop_after, '730 days');
  const orgId = await insertOrg(db, { name: 'retention' });
  const { siteId } = await provisionSite(db, { orgId, name: 'a', url: 'https://a.example' });
  // A clock in the last 30-day chunk entirely past the retention (chunks are aligned on 30-day multiples from the
  // epoch): the baseline's days are dropped by the drop below, and the answer's trend with them (`up` against a
  // baseline of 1, `stable` without one).
  const realNow = (await sql<{ ms: number }>`select (extract(epoch from now()) * 1000)::float8 as ms`.execute(db))
    .rows[0].ms;
  const cutoffDay = Math.floor((realNow - 730 * DAY) / DAY);
  const chunkStartDay = (Math.floor(cutoffDay / 30) - 1) * 30;
  const at = new Date((chunkStartDay + 20) * DAY + 12 * HOUR + 30 * 60_000);
  const atHour = Math.floor(at.getTime() / HOUR) * HOUR;
  await writeHourly(
    db,
    'production',
    rowsOf(siteId, 40, PAGES, atHour).map((r) => ({ ...r, score: r.windowStart === atHour ? 95 : 1 })),
  );
  const cache = new ScoresAnswerCache();
  t.is(await check(t, cache, db, siteId, 'production', at), 'computed');
  t.is(await check(t, cache, db, siteId, 'production', at), 'computed', 'not stored: its days may be dropped');
  const trendOf = async () =>
    (JSON.parse((await fresh(db, siteId, 'production', at)).json.toString()) as { data: { overall_trend: string } })
      .data.overall_trend;
  t.is(await trendOf(), 'up');
  const dropped = await sql<{ n: number }>`
    select count(*)::int as n from drop_chunks('site_score_days', older_than => interval '730 days')`.execute(db);
  t.true(dropped.rows[0].n > 0);
  t.is(await trendOf(), 'stable', 'the drop changed the answer');
  t.is(await check(t, cache, db, siteId, 'production', at), 'computed');
  // A clock within the retention is stored as usual.
  const recent = new Date(realNow - 2 * DAY);
  await writeHourly(db, 'production', rowsOf(siteId, 41, PAGES, Math.floor(recent.getTime() / HOUR) * HOUR));
  await recomputedThenStored('recent', t, cache, db, siteId, 'production', recent);
});
