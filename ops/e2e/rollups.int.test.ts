import test from 'ava';
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { EventBatchMessage, StreamEvent } from '../../shared/contracts/ingest.ts';
import { openDatabase, type DatabaseHandle } from '../../shared/db/connection.ts';
import type { Database } from '../../shared/db/database.ts';
import {
  rebuildPageBuckets,
  rebuildPageWeightedSignals,
  rebuildSessionKeys,
  rebuildSessionRollups,
} from '../../shared/db/session-rollups.ts';
import { calmViewers } from '../../api/routes/revenue/revenue.queries.ts';
import { groupCounts } from '../../api/routes/revenue/insights.queries.ts';
import { applySiteRetention } from '../../shared/tenancy/retention.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { createTestDatabase } from '../../shared/testing/database.ts';
import { seeded } from '../../shared/seeded-random.ts';
import { eraseSessions } from '../../api/routes/privacy/privacy.queries.ts';
import { sampledPageSignals } from '../../api/routes/heatmaps/heatmaps.queries.ts';
import { numberedPageSample } from '../../api/routes/heatmaps/page-sample.reference.ts';
import { rebuildPageHeatmapHours } from '../../shared/db/page-heatmap-hours.ts';
import { pageActivity } from '../../api/routes/pages/page.queries.ts';
import { environmentWhere } from '../../shared/db/environment.ts';
import { CONFUSING_SIGNALS } from '../../shared/domain/session-summary.ts';
import { answerQuery, exploreScope, type ExploreRequest } from '../../api/routes/explore/explore.engine.ts';
import { measureGroups, measureTotal } from '../../api/read-models/explore.queries.ts';
import { rollupAnswers } from '../../api/read-models/explore.rollup.ts';
import type { ExploreFilter, ExploreQuery, GroupBy, Metric } from '../../api/read-models/explore.schema.ts';
import { InDoubtEvents, storeBatch, type FreshEventsSink } from '../../processor/events.consumer.ts';
import { openEmbeddedTestDatabase } from '../../shared/testing/embedded-template.ts';
import { hourlyScoreRows, writeHourly, writeTwoSites } from '../testing/page-score-rows.ts';
import { listCurrentPageScores } from '../../api/read-models/scores.queries.ts';
import { siteScores } from '../../api/read-models/site-scores.ts';

// Rollup = raw: batches go through the processor's batch write (events, sessions, the session rollup), some of them
// twice (a redelivery), some late (an earlier event moves a session's start hour); then every rollup-backed Explorer
// measure must equal the same question asked of the raw sessions and events, on PostgreSQL (COPY path) and on the
// embedded database (insert path). Erasure and retention must take their sessions out of the rollup too; the page
// route's 7-day viewers (page_viewers) are held to the raw page views the same way, and the Explorer's session keys
// (explore_session_keys) to each session's distinct pages and signal types.

// Each database by name; the PostgreSQL scratch database is dropped after.
const handles = new Map<'postgres' | 'pglite', DatabaseHandle>();
let dropPostgres: (() => Promise<void>) | undefined;
test.before(async () => {
  const scratch = await createTestDatabase('rollups_store');
  dropPostgres = scratch.drop;
  handles.set('postgres', await openDatabase({ url: scratch.url, dataDir: '' }));
  handles.set('pglite', await openEmbeddedTestDatabase());
});
test.after.always(async () => {
  for (const h of handles.values()) await h.close();
  await dropPostgres?.();
});

// Not on an hour: the window's two partial hours come from the raw sessions, the rest from the rollup.
const NOW = new Date('2026-03-15T12:34:56.789Z').getTime();
const HOUR = 3_600_000;
const SOURCES = [undefined, '', 'ads', 'google', 'news_letter'];
const VERSIONS = [undefined, '', '1.0', '1.1'];
const SIGNALS = ['rage_click', 'dead_click', 'unknown_thing'];
const PAGES = ['/', '/cart', '/checkout'];

/** Sessions over the last 40 days, each split into 1-4 batches whose context can differ (cohort moves). */
function batchesOf(siteId: string, seed: number): EventBatchMessage[] {
  const rnd = seeded(seed); // the same batches on both databases
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
  const out: EventBatchMessage[] = [];
  for (let s = 0; s < 60; s++) {
    const start = NOW - Math.floor(rnd() * 40 * 24 * HOUR) + (rnd() < 0.1 ? 2 * HOUR : 0);
    const source = pick(SOURCES);
    const environment = pick([undefined, undefined, 'production', 'staging']);
    const parts = 1 + Math.floor(rnd() * 4);
    for (let p = 0; p < parts; p++) {
      const events: StreamEvent[] = [];
      const n = 1 + Math.floor(rnd() * 4);
      for (let i = 0; i < n; i++) {
        const type = pick(['page_view', 'page_view', 'signal', 'conversion', 'custom'] as const);
        events.push({
          id: randomUUID(),
          type,
          ts: start + Math.floor(rnd() * 3 * HOUR),
          page: pick(PAGES),
          // Viewport coordinates on most signals (from the loop's counters, so the random sequence stays the same).
          ...(type === 'signal'
            ? {
                signal: pick(SIGNALS),
                selector: '#b',
                ...((s + p + i) % 5 !== 0 ? { vx: (s * 37 + i) % 1001, vy: (p * 91 + i) % 1001 } : {}),
              }
            : {}),
          ...(type === 'conversion' ? { value: Math.floor(rnd() * 100) } : {}),
          ...(type === 'custom' ? { name: 'scroll' } : {}),
        });
      }
      out.push({
        v: 1,
        batch_id: randomUUID(),
        org_id: randomUUID(),
        site_id: siteId,
        received_at: NOW,
        session_id: `s${s}`,
        context: {
          device: pick(['desktop', 'mobile', 'tablet'] as const),
          viewport: { w: 1280, h: 800 },
          ...(source === undefined ? {} : { source }),
          ...(environment === undefined ? {} : { environment }),
          ...(rnd() < 0.7 ? { app_version: pick(VERSIONS) ?? '' } : {}),
        },
        events,
      });
    }
  }
  // Late batches: a session's later part can be stored before its earlier one.
  for (let i = out.length - 1; i > 0; i--) {
    if (rnd() < 0.3) [out[i], out[i - 1]] = [out[i - 1], out[i]];
  }
  return out;
}

/** The processor's batch write with nothing derived beyond sessions and the rollup (scores and issues are not read here). */
const deriveNothing: FreshEventsSink = { stage: async () => () => {} };

const FILTER_SETS: ExploreFilter[][] = [
  [],
  [{ field: 'confused', op: 'is', value: true }],
  [{ field: 'converted', op: 'is_not', value: true }],
  [
    { field: 'source', op: 'contains', value: 'o' },
    { field: 'confused', op: 'is', value: false },
  ],
  [{ field: 'source', op: 'is_not', value: 'ads' }],
];
const METRICS: Metric[] = ['count', 'avg_pageviews', 'conversion_rate', 'avg_dwell_ms', 'bounce_rate'];
const GROUPS: (GroupBy | undefined)[] = [undefined, 'day', 'source', 'cohort', 'page'];

/** Every rollup-backed measure against the raw compiler (measureTotal, measureGroups) over the same rows. */
async function assertRollupEqualsRaw(
  t: { deepEqual: (a: unknown, b: unknown, m?: string) => void },
  db: Kysely<Database>,
  siteId: string,
) {
  let nonEmpty = 0;
  let turn = 0;
  for (const environment of ['production', 'staging'] as const) {
    for (const window_days of [7, 90]) {
      for (const filters of FILTER_SETS) {
        for (const group_by of GROUPS) {
          // The page buckets keep no source: a group by page with a source filter is the raw path's (not compared here).
          if (group_by === 'page' && filters.some((f) => f.field === 'source')) continue;
          // Each metric in turn: every one meets every group and filter set across the loop, in a test that stays short.
          for (const metric of [METRICS[turn++ % METRICS.length]]) {
            const query: ExploreQuery = {
              window_days,
              filters,
              output: { mode: 'measure', metric, ...(group_by ? { group_by } : {}) },
            };
            const req: ExploreRequest = { siteId, environment, query, now: new Date(NOW) };
            if (!rollupAnswers(filters, group_by)) throw new Error('every query here must be rollup-backed');
            const answer = await answerQuery(db, req);
            if (answer.result.mode !== 'measure') throw new Error('measure expected');
            const scope = exploreScope(req);
            const total = await measureTotal(db, scope, filters, { mode: 'measure', metric });
            const groups = group_by ? await measureGroups(db, scope, filters, metric, group_by) : [];
            const label = JSON.stringify({ environment, window_days, filters, metric, group_by });
            t.deepEqual(
              { value: answer.result.value, sessions: answer.result.sessions, groups: answer.result.groups },
              { value: total.value, sessions: total.sessions, groups: groups.map((g) => ({ ...g })) },
              label,
            );
            if (total.sessions > 0) nonEmpty++;
          }
        }
      }
    }
  }
  return nonEmpty;
}

/** The page route's 7-day viewers of every page (read from page_viewers) against the raw page views. */
async function assertViewersEqualRaw(
  t: { deepEqual: (a: unknown, b: unknown, m?: string) => void },
  db: Kysely<Database>,
  siteId: string,
) {
  for (const environment of ['production', 'staging'] as const) {
    for (const days of [1, 7]) {
      const now = new Date(NOW - (7 - days) * 24 * HOUR);
      for (const page of PAGES) {
        const raw = await sql<{ n: number }>`
          select count(distinct session_id)::int as n from events
          where site_id = ${siteId} and ${environmentWhere(environment)} and page = ${page} and type = 'page_view'
            and ts >= ${new Date(now.getTime() - 7 * 24 * HOUR)}`.execute(db);
        t.deepEqual(
          (await pageActivity(db, siteId, environment, page, now)).sessions,
          raw.rows[0].n,
          `${environment} ${page} ${days}`,
        );
      }
    }
  }
}

/**
 * The Explorer's session keys (explore_session_keys) against each session's distinct pages, signal types and event
 * types read from its raw events; how many keys there are.
 */
async function assertKeysEqualRaw(
  t: { deepEqual: (a: unknown, b: unknown, m?: string) => void },
  db: Kysely<Database>,
  siteId: string,
): Promise<number> {
  const kept = await sql<Record<string, string>>`
    select session_id, kind, key from explore_session_keys where site_id = ${siteId}
    order by session_id collate "C", kind, key collate "C"`.execute(db);
  const raw = await sql<Record<string, string>>`
    select session_id, kind, key from (
      select session_id, 'page' as kind, page as key from events where site_id = ${siteId}
      union
      select session_id, 'signal', signal from events where site_id = ${siteId} and type = 'signal' and signal is not null
      union
      select session_id, 'type', type from events where site_id = ${siteId}) k
    order by session_id collate "C", kind, key collate "C"`.execute(db);
  t.deepEqual(kept.rows, raw.rows, 'session keys');
  return kept.rows.length;
}

/** What the comparisons below need of ava's assertions. */
type Asserts = { deepEqual: (a: unknown, b: unknown, m?: string) => void };

/**
 * Revenue's calm viewers of each page (from page_viewers and page_weighted_signals) against the same question asked of
 * the raw events: sessions with a page view of the page since `since` and no weighted signal event of their own on it
 * since then; how many rows matched.
 */
async function assertCalmEqualsRaw(t: Asserts, db: Kysely<Database>, siteId: string): Promise<number> {
  let n = 0;
  for (const environment of ['production', 'staging'] as const) {
    for (const days of [30, 7, 1]) {
      const since = new Date(NOW - days * 24 * HOUR);
      const kept = await sql<{ page: string; session_id: string }>`
        select page, session_id from (${calmViewers(siteId, environment, since, sql`select unnest(${PAGES}::text[])`)}) c
        order by page collate "C", session_id collate "C"`.execute(db);
      const raw = await sql<{ page: string; session_id: string }>`
        select page, session_id from (select distinct v.page, v.session_id from events v
        where v.site_id = ${siteId} and v.type = 'page_view' and v.ts >= ${since} and ${environmentWhere(environment, 'v.environment')}
          and not exists (select 1 from events g where g.site_id = ${siteId} and g.session_id = v.session_id and g.ts >= ${since}
                            and g.type = 'signal' and g.page = v.page and g.signal in (${sql.join(CONFUSING_SIGNALS)})
                            and ${environmentWhere(environment, 'g.environment')})) r
        order by page collate "C", session_id collate "C"`.execute(db);
      t.deepEqual(kept.rows, raw.rows, `calm viewers ${environment} ${days}`);
      n += kept.rows.length;
    }
  }
  const lastSignals = await sql<Record<string, unknown>>`
    select environment, page, session_id, last_signal_at from page_weighted_signals where site_id = ${siteId}
    order by environment, page collate "C", session_id collate "C"`.execute(db);
  const rawLast = await sql<Record<string, unknown>>`
    select case when environment = 'staging' then 'staging' else 'production' end as environment, page, session_id,
           max(ts) as last_signal_at
    from events where site_id = ${siteId} and type = 'signal' and signal in (${sql.join(CONFUSING_SIGNALS)})
    group by 1, 2, 3 order by environment, page collate "C", session_id collate "C"`.execute(db);
  t.deepEqual(lastSignals.rows, rawLast.rows, 'page weighted signals');
  return n;
}

const EVENT_FILTERS: ExploreFilter[] = [
  { field: 'event_type', op: 'is', value: 'conversion' },
  { field: 'event_type', op: 'is_not', value: 'custom' },
  { field: 'event_type', op: 'contains', value: 'view' },
  { field: 'confused', op: 'is', value: true },
  { field: 'confused', op: 'is', value: false },
];

/**
 * The Explorer's event-type and confused filters (read from the session keys) against the same question asked of the
 * raw events: the sessions of the window with (or without) an event of the type, or a signal event of a confusing
 * type; as a count and as a list.
 */
async function assertEventFiltersEqualRaw(t: Asserts, db: Kysely<Database>, siteId: string): Promise<number> {
  let nonEmpty = 0;
  for (const environment of ['production', 'staging'] as const) {
    for (const window_days of [7, 90]) {
      for (const f of EVENT_FILTERS) {
        const base = { siteId, environment, now: new Date(NOW) };
        const scope = exploreScope({
          ...base,
          query: { window_days, filters: [], output: { mode: 'list', limit: 500 } },
        });
        const cond =
          f.field === 'confused'
            ? sql`e.type = 'signal' and e.signal in (${sql.join(CONFUSING_SIGNALS)})`
            : f.op === 'contains'
              ? sql`strpos(e.type, ${f.value}) > 0`
              : sql`e.type = ${f.value}`;
        const wanted = f.field === 'confused' ? f.value === true : f.op !== 'is_not';
        const raw = await sql<{ id: string }>`
          select s.id from sessions s
          where s.site_id = ${siteId} and ${environmentWhere(environment, 's.environment')}
            and s.started_at >= ${scope.from} and s.started_at <= ${scope.to}
            and ${wanted ? sql`` : sql`not`} exists (select 1 from events e where e.site_id = s.site_id and e.session_id = s.id and ${cond})
          order by s.id`.execute(db);
        const label = JSON.stringify({ environment, window_days, f });
        const count = await answerQuery(db, {
          ...base,
          query: { window_days, filters: [f], output: { mode: 'measure', metric: 'count' } },
        });
        if (count.result.mode !== 'measure') throw new Error('measure expected');
        t.deepEqual(count.result.sessions, raw.rows.length, label);
        const list = await answerQuery(db, {
          ...base,
          query: { window_days, filters: [f], output: { mode: 'list', limit: 500 } },
        });
        if (list.result.mode !== 'list') throw new Error('list expected');
        t.deepEqual(
          list.result.sessions.map((s) => s.session_id).sort(),
          raw.rows.map((r) => r.id),
          label,
        );
        if (raw.rows.length > 0) nonEmpty++;
      }
    }
  }
  return nonEmpty;
}

/** The page heatmap's hours (page_heatmap_hours) that count signals, in key order. */
const heatmapHoursOf = async (db: Kysely<Database>, siteId: string) =>
  (
    await sql<Record<string, unknown>>`
      select environment, page, hour::text as hour, device, signals from page_heatmap_hours
      where site_id = ${siteId} and signals <> 0
      order by environment, page collate "C", hour, device`.execute(db)
  ).rows;

/**
 * The page heatmap's hourly counts against the raw signals with viewport coordinates, and its sample (read from them)
 * against the numbered sample of the raw signals, for every page, environment and device filter at three clocks; how
 * many samples had points.
 */
async function assertHeatmapHoursEqualRaw(t: Asserts, db: Kysely<Database>, siteId: string): Promise<number> {
  const raw = await sql<Record<string, unknown>>`
    select environment, page, date_bin('1 hour', ts, timestamptz '2000-01-01 00:00:00+00')::text as hour, device,
           count(*)::int as signals
    from signals where site_id = ${siteId} and vx is not null and vy is not null
    group by 1, 2, 3, 4 order by environment, page collate "C", hour, device`.execute(db);
  t.deepEqual(await heatmapHoursOf(db, siteId), raw.rows, 'page heatmap hours');
  let points = 0;
  for (const environment of ['production', 'staging'] as const) {
    for (const page of PAGES) {
      for (const device of [undefined, 'desktop', 'mobile'] as const) {
        for (const now of [NOW, NOW - 5 * 24 * HOUR]) {
          const s = { site_id: siteId, environment, page };
          const got = await sampledPageSignals(db, s, device, new Date(now));
          t.deepEqual(got, await numberedPageSample(db, s, device, new Date(now)), `page heatmap ${page} ${device}`);
          if (got.rows.length > 0) points++;
        }
      }
    }
  }
  return points;
}

/** Every rollup against the raw rows, in one call; what each comparison covered, so a test can see it was not empty. */
async function assertEveryRollupEqualsRaw(t: Asserts, db: Kysely<Database>, siteId: string) {
  const sessions = await assertRollupEqualsRaw(t, db, siteId);
  await assertViewersEqualRaw(t, db, siteId);
  const keys = await assertKeysEqualRaw(t, db, siteId);
  const eventFilters = await assertEventFiltersEqualRaw(t, db, siteId);
  const calm = await assertCalmEqualsRaw(t, db, siteId);
  const insights = await assertInsightsEqualRaw(t, db, siteId);
  const heatmaps = await assertHeatmapHoursEqualRaw(t, db, siteId);
  return { sessions, keys, eventFilters, calm, insights, heatmaps };
}

/**
 * Insights' confused-versus-calm counts (by page, by source, in all) from the rollups (conversion event `conversion`)
 * and from the raw path (a custom conversion event) against the same question asked of the raw events: the sessions
 * of the window with their pages, a weighted signal event, a conversion event; how many groups counted sessions.
 */
async function assertInsightsEqualRaw(t: Asserts, db: Kysely<Database>, siteId: string): Promise<number> {
  let nonEmpty = 0;
  // A partial day of 13 hours or more is read as its day minus its other hours: windows ending half past the start
  // hour of a session that started late in its day (the last day's other hours hold it), and starting half past the
  // hour of one that started early (the first day's other hours hold it), so the subtraction meets sessions.
  const starts = (
    await sql<{ at: Date }>`select started_at as at from sessions where site_id = ${siteId} order by id`.execute(db)
  ).rows.map((r) => r.at.getTime());
  const halfPast = (t: number) => Math.floor(t / HOUR) * HOUR + HOUR / 2;
  const late = starts.find((t) => new Date(t).getUTCHours() >= 13) ?? NOW;
  const early = starts.find((t) => new Date(t).getUTCHours() <= 10) ?? NOW;
  for (const environment of ['production', 'staging'] as const) {
    for (const [days, to] of [
      [7, NOW],
      [90, NOW],
      [30, halfPast(late)],
      [30, halfPast(early) + 30 * 24 * HOUR],
    ]) {
      const scope = { siteId, environment, from: new Date(to - days * 24 * HOUR), to: new Date(to) };
      for (const [conversionEvent, converting] of [
        ['conversion', sql`e.type = 'conversion'`],
        ['scroll', sql`e.type = 'custom' and e.name = 'scroll'`],
      ] as const) {
        const has = (cond: RawBuilder<unknown>) =>
          sql`exists (select 1 from events e where e.site_id = ${siteId} and e.session_id = s.id and ${cond})`;
        for (const dimension of ['page', 'source', 'none'] as const) {
          const key =
            dimension === 'page'
              ? sql`p.page`
              : dimension === 'source'
                ? sql`coalesce(nullif(s.source, ''), '(direct)')`
                : sql`''`;
          const n = (cond: RawBuilder<unknown>) => sql`(count(*) filter (where ${cond}))::int`;
          const raw = await sql<Record<string, unknown>>`
            select key, ${n(sql`confused`)} as confused, ${n(sql`confused and converted`)} as confused_converted,
                   ${n(sql`not confused`)} as calm, ${n(sql`not confused and converted`)} as calm_converted
            from (select ${key} as key,
                         ${has(sql`e.type = 'signal' and e.signal in (${sql.join(CONFUSING_SIGNALS)})`)} as confused,
                         ${has(converting)} as converted
                  from sessions s
                  ${dimension === 'page' ? sql`join (select distinct session_id, page from events where site_id = ${siteId}) p on p.session_id = s.id` : sql``}
                  where s.site_id = ${siteId} and ${environmentWhere(environment, 's.environment')}
                    and s.started_at >= ${scope.from} and s.started_at <= ${scope.to}) f
            group by key order by count(*) desc, key`.execute(db);
          const label = JSON.stringify({ environment, days, to, conversionEvent, dimension });
          t.deepEqual(await groupCounts(db, scope, dimension, conversionEvent), raw.rows, label);
          nonEmpty += raw.rows.length;
        }
      }
    }
  }
  return nonEmpty;
}

const hoursOf = async (db: Kysely<Database>, siteId: string) =>
  (
    await sql<Record<string, unknown>>`
      select environment, grain, bucket::text as bucket, source, cohort, confused, converted, bounced, sessions, page_views, dwell_ms
      from explore_session_buckets where site_id = ${siteId} and sessions <> 0
      order by environment, grain, bucket, source collate "C", cohort collate "C", confused, converted, bounced`.execute(
      db,
    )
  ).rows;

/** The Explorer's page buckets (explore_page_buckets) that still count sessions, in key order. */
const pageBucketsOf = async (db: Kysely<Database>, siteId: string) =>
  (
    await sql<Record<string, unknown>>`
      select environment, grain, bucket::text as bucket, page, confused, converted, sessions, page_views, bounced, dwell_ms
      from explore_page_buckets where site_id = ${siteId} and sessions <> 0
      order by environment, grain, bucket, page collate "C", confused, converted`.execute(db)
  ).rows;

for (const name of ['postgres', 'pglite'] as const) {
  test(`${name}: every rollup-backed Explorer measure and the page viewers equal the raw answer, after redelivery, erasure and retention`, async (t) => {
    const h = handles.get(name)!;
    const orgId = await insertOrg(h.db, { name: 'rollups' });
    const { siteId } = await provisionSite(h.db, { orgId, name: 'rollups', url: 'https://rollups.example' });
    const batches = batchesOf(siteId, 7);
    const doubts = new InDoubtEvents();
    for (let i = 0; i < batches.length; i += 7) {
      await storeBatch(h.bulk, deriveNothing, batches.slice(i, i + 7), doubts);
    }
    // Redelivery of a fetch already stored (and of one batch twice in one fetch): nothing moves.
    const before = await hoursOf(h.db, siteId);
    const pagesBefore = await pageBucketsOf(h.db, siteId);
    const heatmapBefore = await heatmapHoursOf(h.db, siteId);
    await storeBatch(h.bulk, deriveNothing, [...batches.slice(0, 9), batches[3]], doubts);
    t.deepEqual(await hoursOf(h.db, siteId), before, 'a redelivered batch moves nothing');
    t.deepEqual(await pageBucketsOf(h.db, siteId), pagesBefore, 'nor the page buckets');
    t.deepEqual(await heatmapHoursOf(h.db, siteId), heatmapBefore, 'nor the page heatmap hours');

    const covered = await assertEveryRollupEqualsRaw(t, h.db, siteId);
    t.true(covered.sessions > 40, 'the comparisons cover sessions');
    t.true(covered.keys > 100, 'the sessions have pages and signals');
    t.true(covered.eventFilters > 10, 'the event filters match sessions');
    t.true(covered.calm > 20, 'pages have calm viewers');
    t.true(covered.insights > 40, 'insights count sessions');
    t.true(covered.heatmaps > 20, 'page heatmaps have points');
    // The incremental rollup is the rollup the backfill builds from the raw rows.
    await rebuildSessionRollups(h.db, siteId);
    t.deepEqual(await hoursOf(h.db, siteId), before);
    await rebuildSessionKeys(h.db, siteId);
    await rebuildPageBuckets(h.db, siteId);
    t.deepEqual(await pageBucketsOf(h.db, siteId), pagesBefore, 'the page buckets the backfill sums');
    await rebuildPageWeightedSignals(h.db, siteId);
    await assertCalmEqualsRaw(t, h.db, siteId);
    await rebuildPageHeatmapHours(h.db, siteId);
    t.deepEqual(await heatmapHoursOf(h.db, siteId), heatmapBefore, 'the page heatmap hours the backfill counts');

    await h.db.transaction().execute((trx) => eraseSessions(trx, siteId, ['s1', 's2', 's3', 's5', 's8']));
    await assertEveryRollupEqualsRaw(t, h.db, siteId);

    await h.db.updateTable('sites').set({ retention_days: 31 }).where('id', '=', siteId).execute();
    t.true((await applySiteRetention(h.db, [siteId], new Date(NOW))) > 0, 'retention deleted old sessions');
    await assertEveryRollupEqualsRaw(t, h.db, siteId);
    const afterRetention = await hoursOf(h.db, siteId);
    const pagesAfterRetention = await pageBucketsOf(h.db, siteId);
    await rebuildSessionRollups(h.db, siteId);
    t.deepEqual(await hoursOf(h.db, siteId), afterRetention);
    await rebuildSessionKeys(h.db, siteId);
    await rebuildPageBuckets(h.db, siteId);
    t.deepEqual(await pageBucketsOf(h.db, siteId), pagesAfterRetention, 'erasure and retention took their pages out');
    const heatmapAfterRetention = await heatmapHoursOf(h.db, siteId);
    await rebuildPageHeatmapHours(h.db, siteId);
    t.deepEqual(
      await heatmapHoursOf(h.db, siteId),
      heatmapAfterRetention,
      'and their signals out of the heatmap hours',
    );
  });
}

// Rollup = raw for page_current_scores (migration 0360): after every kind of write to page_scores (the processor's
// hourly upserts, a rewrite, an older hour, a moved hour, deletes of a page's latest hour and of all its hours, a
// site's rows deleted), the rollup is the latest page_scores row of each page, and the current scores read from it
// equal those the same query reads from the raw rows (`distinct on`).
const THIS_HOUR = Math.floor(NOW / HOUR) * HOUR;
const CURRENT_PAGES = ['/', '/cart', '/checkout', '/a"b', '/ü'];

/** Hourly rows over 9 days (two before the 7-day window), some hours skipped. */
const rowsOf = (siteId: string, seed: number, pages = CURRENT_PAGES) => hourlyScoreRows(siteId, seed, pages, THIS_HOUR);

const currentColumns = sql`site_id::text, environment, page, window_start, score::float8 as score, sessions, dominant_signal, trend, updated_at`;

/** The rollup against the latest raw row of each page, whole tables; how many pages it holds. */
async function assertCurrentScoresEqualRaw(t: Asserts, db: Kysely<Database>): Promise<number> {
  const raw = await sql<Record<string, unknown>>`
    select distinct on (site_id, environment, page) ${currentColumns} from page_scores
    order by site_id, environment, page, window_start desc`.execute(db);
  const rollup = await sql<Record<string, unknown>>`
    select ${currentColumns} from page_current_scores order by site_id, environment, page`.execute(db);
  t.deepEqual(rollup.rows, raw.rows);
  return raw.rows.length;
}

/** The current scores as the read models answer them, and as the same query over the raw rows answers them. */
async function assertCurrentAnswersEqualRaw(t: Asserts, db: Kysely<Database>, siteId: string) {
  for (const environment of ['production', 'staging'] as const)
    for (const at of [new Date(NOW), new Date(NOW + 40 * HOUR), new Date(NOW + 8 * 24 * HOUR)]) {
      const raw = await sql<Record<string, unknown>>`
        select * from (
          select distinct on (page) page, score::float8 as score, trend, dominant_signal, sessions, updated_at
          from page_scores
          where site_id = ${siteId} and environment = ${environment} and window_start >= ${new Date(at.getTime() - 7 * 24 * HOUR)}
          order by page desc, window_start desc) latest
        order by score desc, page asc`.execute(db);
      t.deepEqual(await listCurrentPageScores(db, siteId, environment, at), raw.rows);
      const site = await siteScores(db, siteId, environment, at);
      t.deepEqual(
        site.pages.map((p) => p.page),
        raw.rows.map((r) => r.page),
      );
    }
}

for (const name of ['postgres', 'pglite'] as const) {
  test(`${name}: page_current_scores is each page's latest page_scores row after every kind of write`, async (t) => {
    const { db } = handles.get(name)!;
    const orgId = await insertOrg(db, { name: 'current' });
    const { siteId, other } = await writeTwoSites(db, orgId, CURRENT_PAGES, THIS_HOUR);
    t.is(await assertCurrentScoresEqualRaw(t, db), CURRENT_PAGES.length + 2 + 2);
    await assertCurrentAnswersEqualRaw(t, db, siteId);

    // The current hour rewritten (erasure's recompute, a redelivery): an update of the kept row.
    await writeHourly(
      db,
      'production',
      rowsOf(siteId, 4).filter((r) => r.windowStart === THIS_HOUR),
    );
    // An older hour written late: the kept row stays.
    await writeHourly(
      db,
      'production',
      rowsOf(siteId, 5)
        .filter((r, i, all) => all.findIndex((o) => o.page === r.page) === i)
        .map((r) => ({ ...r, windowStart: THIS_HOUR - 100 * HOUR })),
    );
    await assertCurrentScoresEqualRaw(t, db);
    await assertCurrentAnswersEqualRaw(t, db, siteId);

    // A kept row moved to another hour (older), and to another page.
    await sql`update page_scores set window_start = window_start - interval '30 hours 17 minutes'
              where site_id = ${siteId} and environment = 'production' and page = '/cart'
                and window_start = (select max(window_start) from page_scores where site_id = ${siteId} and page = '/cart' and environment = 'production')`.execute(
      db,
    );
    await sql`update page_scores set page = '/moved'
              where site_id = ${siteId} and environment = 'staging' and page = '/' and window_start = ${new Date(THIS_HOUR)}`.execute(
      db,
    );
    await assertCurrentScoresEqualRaw(t, db);
    await assertCurrentAnswersEqualRaw(t, db, siteId);

    // Deletes: the latest hour of a page (its previous hour takes over), every hour of a page, a site's rows.
    await sql`delete from page_scores where site_id = ${siteId} and environment = 'production' and page = '/'
              and window_start = ${new Date(THIS_HOUR)}`.execute(db);
    await sql`delete from page_scores where site_id = ${siteId} and environment = 'production' and page = '/checkout'`.execute(
      db,
    );
    t.is(await assertCurrentScoresEqualRaw(t, db), CURRENT_PAGES.length - 1 + 3 + 2);
    await assertCurrentAnswersEqualRaw(t, db, siteId);
    await sql`delete from page_scores where site_id = ${other}`.execute(db);
    t.is(await assertCurrentScoresEqualRaw(t, db), CURRENT_PAGES.length - 1 + 3);
    await assertCurrentAnswersEqualRaw(t, db, siteId);
  });
}
