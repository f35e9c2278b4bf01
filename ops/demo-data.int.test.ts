import test from 'ava';
import { sql } from 'kysely';
import { SIGNAL_CATALOG } from '../shared/domain/signal-catalog.ts';
import { createLogger } from '../shared/logger.ts';
import { insertOrg, provisionSite } from '../shared/tenancy/provision.ts';
import type { Kysely } from 'kysely';
import type { Database } from '../shared/db/database.ts';
import { recomputeSiteCommand } from '../processor/recompute-site.ts';
import {
  rebuildPageBuckets,
  rebuildPageViewers,
  rebuildSessionKeys,
  rebuildSessionRollups,
} from '../shared/db/session-rollups.ts';
import { writeDemoData } from './demo-data.ts';
import { useStack } from './testing/stack.ts';
import { getJson } from '../shared/testing/http-client.ts';
import { openEmbeddedTestDatabase } from '../shared/testing/embedded-template.ts';

const log = createLogger('silent');

/** Every session row equals what the processor derives from its events; signals mirror the signal events. */
async function assertConsistent(t: import('ava').ExecutionContext, db: Kysely<Database>, siteId: string) {
  const { rows: bad } = await sql<{ id: string }>`
    with agg as (
      select session_id, min(ts) as started_at, max(ts) as last_seen_at, count(*)::int as event_count,
        (count(*) filter (where type = 'page_view'))::int as page_views, (count(*) filter (where type = 'signal'))::int as signal_count,
        (count(*) filter (where type = 'conversion'))::int as conversions, coalesce(sum(value) filter (where type = 'conversion'), 0)::float8 as revenue,
        (array_agg(page order by ts asc))[1] as first_page, (array_agg(page order by ts desc))[1] as last_page
      from events where site_id = ${siteId} group by session_id)
    select s.id from sessions s full join agg a on a.session_id = s.id
    where s.site_id = ${siteId} and (a.session_id is null or s.started_at <> a.started_at or s.last_seen_at <> a.last_seen_at or s.event_count <> a.event_count
      or s.page_views <> a.page_views or s.signal_count <> a.signal_count or s.conversions <> a.conversions or s.revenue <> a.revenue
      or s.first_page <> a.first_page or s.last_page <> a.last_page)`.execute(db);
  t.deepEqual(bad, [], 'sessions as the processor derives them');
  const {
    rows: [c],
  } = await sql<{ events: number; signals: number; mirrored: number }>`
    select (select count(*)::int from events where site_id = ${siteId} and type = 'signal') as events,
      (select count(*)::int from signals where site_id = ${siteId}) as signals,
      (select count(*)::int from signals g join events e on e.site_id = g.site_id and e.id = g.event_id and e.ts = g.ts
        where g.site_id = ${siteId} and e.signal = g.signal_type and e.page = g.page and g.environment = coalesce(e.environment, 'production')) as mirrored`.execute(
    db,
  );
  t.true(c.events > 0);
  t.is(c.signals, c.events);
  t.is(c.mirrored, c.events);
  // The rollups written beside the raw rows are what the set-based rebuild derives from them.
  const rollups = async () => ({
    states: (
      await sql`select session_id, environment, hour, source, cohort, confused, converted, bounced, page_views, dwell_ms,
                       last_seen_at from explore_session_state where site_id = ${siteId} order by session_id`.execute(
        db,
      )
    ).rows,
    buckets: (
      await sql`select environment, grain, bucket, source, cohort, confused, converted, bounced, sessions, page_views,
                       dwell_ms from explore_session_buckets where site_id = ${siteId}
                order by environment, grain, bucket, source, cohort, confused, converted, bounced`.execute(db)
    ).rows,
    viewers: (
      await sql`select environment, page, session_id, last_view_at from page_viewers where site_id = ${siteId}
                order by environment, page, session_id`.execute(db)
    ).rows,
    keys: (
      await sql<{ kind: string }>`select session_id, kind, key from explore_session_keys where site_id = ${siteId}
                order by session_id, kind, key`.execute(db)
    ).rows,
    pageBuckets: (
      await sql<{
        environment: string;
        grain: string;
      }>`select environment, grain, bucket, page, confused, converted, sessions, page_views, bounced, dwell_ms
                from explore_page_buckets where site_id = ${siteId}
                order by environment, grain, bucket, page, confused, converted`.execute(db)
    ).rows,
  });
  const written = await rollups();
  for (const [table, rows] of Object.entries(written)) t.true(rows.length > 0, table);
  t.deepEqual([...new Set(written.keys.map((k) => k.kind))].sort(), ['page', 'signal', 'type'], 'keys of every kind');
  t.deepEqual(
    [...new Set(written.pageBuckets.map((b) => `${b.environment} ${b.grain}`))].sort(),
    ['production day', 'production hour', 'staging day', 'staging hour'],
    'page buckets of both environments and grains',
  );
  await rebuildSessionRollups(db, siteId);
  await rebuildPageViewers(db, siteId);
  await rebuildSessionKeys(db, siteId);
  await rebuildPageBuckets(db, siteId);
  t.deepEqual(written, await rollups(), 'rollups as the rebuild derives them from the raw rows');
}

const stack = useStack(test, { processor: false });

test('PostgreSQL (COPY): rows consistent with the processor, and every read route answers from them', async (t) => {
  const { db } = stack.infra.database;
  const siteId = stack.tenant.siteId;
  const r = await writeDemoData(
    stack.infra.database,
    stack.databaseUrl,
    { events: 20_000, siteId, pages: 200, seed: 7 },
    log,
  );
  t.is(r.events, 20_000);
  t.is(
    (
      await db
        .selectFrom('events')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('site_id', '=', siteId)
        .executeTakeFirstOrThrow()
    ).n,
    20_000,
  );
  await assertConsistent(t, db, siteId);
  const types = (
    await db.selectFrom('signals').select('signal_type').distinct().where('site_id', '=', siteId).execute()
  ).map((x) => x.signal_type);
  for (const d of SIGNAL_CATALOG) t.true(types.includes(d.type), `signals of type ${d.type}`);
  t.true(r.deploys >= 9 && r.conversions > 0 && r.historyRows > 0);
  const days = await db
    .selectFrom('score_history')
    .select(sql<number>`count(distinct day)::int`.as('n'))
    .where('site_id', '=', siteId)
    .executeTakeFirstOrThrow();
  t.true(days.n >= 29, 'a score history for every day');
  // The site's day sums (site_score_days) are written beside the history: the aggregate of its rows, day by day.
  const siteDays = await sql<{ days: number; differ: number }>`
    select count(*)::int as days,
           count(*) filter (where d.weighted_sum is distinct from r.weighted_sum or d.sessions is distinct from r.sessions)::int as differ
    from (select environment, day, sum(score * sessions) as weighted_sum, sum(sessions) as sessions from score_history
          where site_id = ${siteId} and sessions > 0 group by environment, day) r
    full join (select environment, day, weighted_sum, sessions from site_score_days where site_id = ${siteId} and sessions > 0) d
      using (environment, day)`.execute(db);
  t.true(siteDays.rows[0].days >= days.n);
  t.is(siteDays.rows[0].differ, 0);
  // The derived rows are what the processor's recompute finds from the raw rows: nothing differs.
  const check = await recomputeSiteCommand(db, siteId, Date.now(), false, log);
  t.deepEqual([check.pages.differing, check.issues.differing, check.elements.differing], [[], [], []]);
  t.true(check.issues.expected > 0 && check.elements.expected > 0);

  const auth = { authorization: `Bearer ${stack.tenant.secretKey}` };
  const get = async (path: string) => {
    const res = await getJson(`${stack.baseUrl}${path}${path.includes('?') ? '&' : '?'}site_id=${siteId}`, auth);
    t.is(res.status, 200, path);
    return res.body.data;
  };
  const scores = await get('/v1/query/scores');
  t.true(scores.pages.length > 10);
  const top = scores.pages[0].page as string;
  t.true((await get('/v1/query/issues')).issues.length > 0);
  const page = await get(`/v1/query/page?page=${encodeURIComponent('/checkout')}`);
  t.true(page.score_history.length > 20 && page.elements.length > 0);
  const elements = (await get('/v1/query/elements')).elements;
  t.true(elements.length > 0);
  t.true(
    (
      await get(
        `/v1/query/element-heatmap?page=${encodeURIComponent(elements[0].page)}&selector=${encodeURIComponent(elements[0].selector)}`,
      )
    ).points.length > 0,
  );
  t.true((await get(`/v1/query/page-heatmap?page=${encodeURIComponent('/checkout')}`)).points.length > 0);
  t.true((await get('/v1/query/trends?days=30')).history.length >= 29);
  t.true((await get('/v1/query/deploys')).deploys.length >= 9);
  t.true((await get('/v1/query/flows')).edges.length > 0);
  t.true((await get('/v1/query/journeys/friction?limit=1000')).edges.length > 0);
  t.true((await get('/v1/query/insights?days=30')).enabled);
  t.true(typeof top === 'string');
  const measure = await get(
    `/v1/query/explore?q=${encodeURIComponent(JSON.stringify({ window_days: 30, output: { mode: 'measure', metric: 'conversion_rate', group_by: 'cohort' } }))}`,
  );
  t.true(measure.result.groups.length >= 9 && measure.result.value > 0);
});

test('embedded database (inserts): the same rows', async (t) => {
  const handle = await openEmbeddedTestDatabase();
  try {
    const orgId = await insertOrg(handle.db, { name: 'demo' });
    const { siteId } = await provisionSite(handle.db, { orgId, name: 'demo', url: 'https://shop.example' });
    const r = await writeDemoData(handle, undefined, { events: 3000, siteId, pages: 50, seed: 3 }, log);
    t.is(r.events, 3000);
    await assertConsistent(t, handle.db, siteId);
    // A second run into the same site (`--site`): its page buckets already hold rows, so they are summed again
    // from the states and keys of both runs.
    await writeDemoData(handle, undefined, { events: 1000, siteId, pages: 50, seed: 4 }, log);
    await assertConsistent(t, handle.db, siteId);
    t.true(
      (await handle.db.selectFrom('page_scores').select('page').where('site_id', '=', siteId).execute()).length > 0,
    );
  } finally {
    await handle.close();
  }
});
