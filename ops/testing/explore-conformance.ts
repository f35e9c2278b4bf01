/**
 * Test-only: the Explorer's conformance suite over HTTP, run on PostgreSQL (ops/e2e/explore.int.test.ts) and on the embedded
 * default (ops/e2e/explore-embedded.int.test.ts). A fixed dataset with hand-computed answers anchors the definitions of
 * docs/explorer.md; every field × op, metric × group_by is then held to the reference evaluator; GET and POST
 * must answer alike; every refusal names its path; another site's rows never show.
 */
import type { TestFn } from 'ava';
import { getJson, postJson } from '../../shared/testing/http-client.ts';
import type { TestStack, TestTenant } from './stack.ts';
import { explore } from '../../api/routes/explore/explore.engine.ts';
import { referenceExplore } from '../../api/routes/explore/explore.reference.ts';
import { ExploreQuerySchema, GROUP_BYS, METRICS, OPS, TEXT_FIELDS } from '../../api/read-models/explore.schema.ts';
import {
  deriveSession,
  insertDataset,
  roundFloats,
  type Dataset,
  type TestEvent,
  type TestSessionContext,
} from '../../api/routes/explore/explore.test-support.ts';

const MIN = 60_000;
const DAY = 86_400_000;

interface Ctx {
  stack: TestStack;
  a: TestTenant;
  b: TestTenant;
  data: Dataset;
}

/** Sessions of the fixed dataset, by name; times relative to `t0` (an hour before the suite starts). */
function fixedDataset(a: string, b: string, t0: number): Dataset {
  const data: Dataset = { sessions: [], events: [] };
  const session = (
    ctx: Omit<TestSessionContext, 'device'> & { device?: string },
    events: [number, string, string, string | null, number | null][],
  ) => {
    const evs: TestEvent[] = events.map(([ts, type, page, signal, value]) => ({
      site_id: ctx.site_id,
      session_id: ctx.id,
      ts,
      type,
      page,
      signal,
      value,
    }));
    data.events.push(...evs);
    data.sessions.push(deriveSession({ device: 'desktop', ...ctx }, evs));
  };
  const s1 = t0 - 3 * DAY;
  session({ site_id: a, id: 's1', source: 'ads', app_version: '1.0', environment: null }, [
    [s1, 'page_view', '/home', null, null],
    [s1 + MIN, 'page_view', '/pricing', null, null],
    [s1 + 2 * MIN, 'signal', '/pricing', 'rage_click', null],
    [s1 + 5 * MIN, 'conversion', '/checkout', null, 50],
  ]);
  const s2 = t0 - 2 * DAY;
  session({ site_id: a, id: 's2', source: null, app_version: '1.1', environment: 'production', device: 'mobile' }, [
    [s2, 'page_view', '/home', null, null],
    [s2 + 30_000, 'signal', '/home', 'dead_click', null],
  ]);
  const s3 = t0 - DAY;
  session({ site_id: a, id: 's3', source: 'news_letter', app_version: null, environment: null }, [
    [s3, 'page_view', '/100%off', null, null],
    [s3 + MIN, 'custom', '/100%off', null, null],
    [s3 + 2 * MIN, 'signal', '/100%off', 'custom_thing', null],
  ]);
  const s4 = t0 - 10 * DAY;
  session({ site_id: a, id: 's4', source: 'ads', app_version: '1.1', environment: null }, [
    [s4, 'page_view', '/home', null, null],
    [s4 + MIN, 'page_view', '/a_b', null, null],
    [s4 + 2 * MIN, 'page_view', '/aXb', null, null],
  ]);
  session({ site_id: a, id: 's8', source: 'ads', app_version: '1.1', environment: null }, [
    [t0 - 12 * DAY, 'page_view', '/aXb', null, null],
  ]);
  session({ site_id: a, id: 's5', source: 'ads', app_version: '1.0', environment: 'staging' }, [
    [t0 - DAY, 'page_view', '/home', null, null],
  ]);
  session({ site_id: a, id: 's7', source: '', app_version: null, environment: 'production' }, [
    [t0 - 40 * DAY, 'page_view', '/checkout', null, null],
  ]);
  session({ site_id: b, id: 's6', source: 'ads', app_version: '1.0', environment: null }, [
    [t0 - DAY, 'page_view', '/home', null, null],
    [t0 - DAY + MIN, 'signal', '/home', 'rage_click', null],
    [t0 - DAY + 2 * MIN, 'conversion', '/home', null, 9],
  ]);
  // The same session id on the other site: a join that forgot the site would mix them.
  session({ site_id: b, id: 's1', source: 'leak', app_version: '9.9', environment: null }, [
    [t0 - DAY, 'signal', '/leak', 'rage_click', null],
  ]);
  return data;
}

export function exploreConformance(test: TestFn<Ctx>, start: () => Promise<TestStack>): void {
  test.before(async (t) => {
    const stack = await start();
    const a = stack.tenant;
    const b = await stack.newTenant();
    const data = fixedDataset(a.siteId, b.siteId, Date.now() - 3_600_000);
    await insertDataset(stack.infra.database.db, data);
    t.context = { stack, a, b, data };
  });
  test.after.always(async (t) => {
    await t.context.stack?.stop();
  });

  const auth = (tenant: TestTenant) => ({ authorization: `Bearer ${tenant.secretKey}` });
  const post = (t: { context: Ctx }, q: unknown, extra = '', tenant = t.context.a, site = tenant.siteId) =>
    postJson(`${t.context.stack.baseUrl}/v1/query/explore?site_id=${site}${extra}`, q, auth(tenant));
  const get = (t: { context: Ctx }, q: unknown, extra = '', tenant = t.context.a, site = tenant.siteId) =>
    getJson(
      `${t.context.stack.baseUrl}/v1/query/explore?site_id=${site}${extra}&q=${encodeURIComponent(JSON.stringify(q))}`,
      auth(tenant),
    );
  const ids = (body: any) => body.data.result.sessions.map((s: { session_id: string }) => s.session_id);
  const list = async (t: { context: Ctx }, filters: unknown[], window_days = 7) =>
    ids((await post(t, { window_days, filters })).body);

  test('list: the sessions of the window, newest first, with their summaries', async (t) => {
    const r = await post(t, {});
    t.is(r.status, 200);
    t.deepEqual(ids(r.body), ['s3', 's2', 's1']);
    t.like(r.body.data.result.sessions[2], {
      session_id: 's1',
      dwell_ms: 5 * MIN,
      page_views: 2,
      pages: ['/home', '/pricing', '/checkout'],
      page_count: 3,
      signals: { rage_click: 1 },
      confused: true,
      converted: true,
      conversions: 1,
      revenue: 50,
      source: 'ads',
      device: 'desktop',
      app_version: '1.0',
    });
    t.like(r.body.data.result.sessions[1], {
      session_id: 's2',
      source: '(direct)',
      confused: true,
      converted: false,
      device: 'mobile',
      signals: { dead_click: 1 },
    });
    t.like(r.body.data.result.sessions[0], {
      session_id: 's3',
      confused: false,
      signals: { custom_thing: 1 },
      app_version: null,
    });
    t.like(r.body.data.meta, { truncated: false, window: { days: 7 }, rows_scanned: null });
    t.is(typeof r.body.data.meta.took_ms, 'number');
    t.deepEqual(r.body.data.query, { window_days: 7, filters: [], output: { mode: 'list', limit: 100 } });
    const cut = await post(t, { output: { mode: 'list', limit: 2 } });
    t.deepEqual(ids(cut.body), ['s3', 's2']);
    t.true(cut.body.data.meta.truncated, 'a cut list says so');
    t.deepEqual(await list(t, [], 30), ['s3', 's2', 's1', 's4', 's8'], 'the window is window_days');
  });

  test('every field and op, on hand-computed answers', async (t) => {
    const cases: [unknown[], string[], number?][] = [
      [[{ field: 'page', op: 'is', value: '/home' }], ['s2', 's1']],
      [[{ field: 'page', op: 'is_not', value: '/home' }], ['s3']],
      [[{ field: 'page', op: 'contains', value: '%' }], ['s3']],
      [[{ field: 'page', op: 'contains', value: '_' }], ['s4'], 30],
      [[{ field: 'page', op: 'contains', value: 'ric' }], ['s1']],
      [[{ field: 'signal', op: 'is', value: 'rage_click' }], ['s1']],
      [[{ field: 'signal', op: 'is_not', value: 'rage_click' }], ['s3', 's2']],
      [[{ field: 'signal', op: 'contains', value: 'click' }], ['s2', 's1']],
      [[{ field: 'source', op: 'is', value: 'ads' }], ['s1']],
      [[{ field: 'source', op: 'is_not', value: 'ads' }], ['s3', 's2']],
      [[{ field: 'source', op: 'is', value: '(direct)' }], ['s2']],
      [[{ field: 'source', op: 'contains', value: 'letter' }], ['s3']],
      [[{ field: 'confused', op: 'is', value: true }], ['s2', 's1']],
      [[{ field: 'confused', op: 'is', value: false }], ['s3']],
      [[{ field: 'confused', op: 'is_not', value: true }], ['s3']],
      [[{ field: 'converted', op: 'is', value: true }], ['s1']],
      [[{ field: 'converted', op: 'is_not', value: true }], ['s3', 's2']],
      [[{ field: 'event_type', op: 'is', value: 'custom' }], ['s3']],
      [[{ field: 'event_type', op: 'is_not', value: 'conversion' }], ['s3', 's2']],
      [[{ field: 'event_type', op: 'contains', value: 'view' }], ['s3', 's2', 's1']],
      [
        [
          { field: 'page', op: 'is', value: '/home' },
          { field: 'confused', op: 'is', value: true },
          { field: 'converted', op: 'is', value: false },
        ],
        ['s2'],
      ],
    ];
    for (const [filters, want, days] of cases) t.deepEqual(await list(t, filters, days), want, JSON.stringify(filters));
  });

  test('every metric and group_by, on hand-computed answers', async (t) => {
    const measure = async (metric: string, group_by?: string) =>
      (await post(t, { output: { mode: 'measure', metric, group_by } })).body.data.result;
    t.like(await measure('count'), { value: 3, sessions: 3, unit: 'sessions', group_by: null, groups: [] });
    t.is(roundFloats((await measure('avg_pageviews')).value), roundFloats(4 / 3));
    t.is(roundFloats((await measure('conversion_rate')).value), roundFloats(1 / 3));
    t.is((await measure('avg_dwell_ms')).value, (5 * MIN + 30_000 + 2 * MIN) / 3);
    t.is(roundFloats((await measure('bounce_rate')).value), roundFloats(2 / 3));
    t.deepEqual((await measure('count', 'source')).groups, [
      { key: '(direct)', value: 1, sessions: 1 },
      { key: 'ads', value: 1, sessions: 1 },
      { key: 'news_letter', value: 1, sessions: 1 },
    ]);
    t.deepEqual(
      (await measure('count', 'cohort')).groups.map((g: { key: string }) => g.key),
      ['1.0', '1.1', null],
    );
    t.deepEqual(
      (await measure('count', 'page')).groups.map((g: { key: string; sessions: number }) => [g.key, g.sessions]),
      [
        ['/home', 2],
        ['/100%off', 1],
        ['/checkout', 1],
        ['/pricing', 1],
      ],
    );
    t.deepEqual(
      (await measure('count', 'signal')).groups.map((g: { key: string }) => g.key),
      ['custom_thing', 'dead_click', 'rage_click'],
    );
    const days = (await measure('bounce_rate', 'day')).groups;
    t.deepEqual(
      days.map((g: { value: number }) => g.value),
      [0, 1, 1],
      'one session a day: s1 did not bounce, s2 and s3 did',
    );
    t.deepEqual(
      days.map((g: { key: string }) => g.key),
      [...days.map((g: { key: string }) => g.key)].sort(),
    );
  });

  test('every field × op and metric × group_by answers as the reference evaluator, and GET answers as POST', async (t) => {
    const values: Record<string, string[]> = {
      signal: ['rage_click', 'click', '_'],
      page: ['/home', '%', '/a_b'],
      source: ['ads', '(direct)', 'd'],
      event_type: ['signal', 'view'],
    };
    const queries: unknown[] = [];
    for (const field of TEXT_FIELDS)
      for (const op of OPS)
        for (const value of values[field]) queries.push({ window_days: 30, filters: [{ field, op, value }] });
    for (const field of ['confused', 'converted'])
      for (const op of ['is', 'is_not'])
        for (const value of [true, false]) queries.push({ window_days: 30, filters: [{ field, op, value }] });
    for (const metric of METRICS)
      for (const group_by of [undefined, ...GROUP_BYS])
        queries.push({ window_days: 30, output: { mode: 'measure', metric, group_by } });
    const strip = (body: any) => {
      const { took_ms: _took, statement_timeout_ms: _timeout, window, ...meta } = body.data.meta;
      return roundFloats({ ...body.data, meta: { ...meta, window: { days: window.days } } });
    };
    for (const q of queries) {
      const [p, g] = [await post(t, q), await get(t, q)];
      t.is(p.status, 200, JSON.stringify(q));
      t.deepEqual(strip(g.body), strip(p.body), `GET = POST for ${JSON.stringify(q)}`);
      const want = referenceExplore(t.context.data, {
        siteId: t.context.a.siteId,
        environment: 'production',
        query: ExploreQuerySchema.parse(q),
        now: new Date(p.body.data.meta.window.to),
      });
      t.deepEqual(strip(p.body), strip({ data: want }), JSON.stringify(q));
    }
  });

  test("environment reads staging apart; another site's rows never show", async (t) => {
    t.deepEqual(ids((await post(t, {}, '&environment=staging')).body), ['s5']);
    t.is((await post(t, {}, '&environment=qa')).status, 400);
    const leak = await post(t, { window_days: 90, filters: [{ field: 'source', op: 'is', value: 'leak' }] });
    t.deepEqual(ids(leak.body), []);
    const s1 = (await post(t, { window_days: 90 })).body.data.result.sessions.find(
      (s: { session_id: string }) => s.session_id === 's1',
    );
    t.deepEqual(s1.pages, ['/home', '/pricing', '/checkout'], "the other site's s1 adds no page");
    t.deepEqual(s1.signals, { rage_click: 1 });
    const groups = (await post(t, { window_days: 90, output: { mode: 'measure', metric: 'count', group_by: 'page' } }))
      .body.data.result.groups;
    t.false(groups.some((g: { key: string }) => g.key === '/leak'));
    // Site A's key on site B: the same 404 as a missing site, by GET and by POST.
    for (const r of [
      await post(t, {}, '', t.context.a, t.context.b.siteId),
      await get(t, {}, '', t.context.a, t.context.b.siteId),
    ]) {
      t.is(r.status, 404);
      t.is(r.body.error.code, 'not_found');
    }
    t.deepEqual(ids((await post(t, {}, '', t.context.b)).body), ['s1', 's6']);
  });

  test('refusals: 400 invalid_input naming the path, alike by GET and POST; 12 filters pass, 13 do not', async (t) => {
    const f = { field: 'page', op: 'is', value: '/home' };
    t.is((await post(t, { filters: Array(12).fill(f) })).status, 200);
    t.is((await get(t, { filters: Array(12).fill(f) })).status, 200);
    const cases: [unknown, string][] = [
      [{ filters: Array(13).fill(f) }, 'filters'],
      [{ filters: [f, f, f, { field: 'page', op: 'near', value: 'x' }] }, 'filters[3].op'],
      [{ filters: [{ field: 'country', op: 'is', value: 'x' }] }, 'filters[0].field'],
      [{ filters: [{ field: 'confused', op: 'contains', value: true }] }, 'filters[0].op'],
      [{ filters: [{ field: 'converted', op: 'is', value: 'yes' }] }, 'filters[0].value'],
      [{ output: { mode: 'table' } }, 'output.mode'],
      [{ output: { mode: 'measure', metric: 'sum' } }, 'output.metric'],
      [{ output: { mode: 'measure', metric: 'count', group_by: 'country' } }, 'output.group_by'],
      [{ output: { mode: 'list', limit: 501 } }, 'output.limit'],
      [{ window_days: 91 }, 'window_days'],
      [{ sort: 'ts' }, 'sort'],
    ];
    for (const [q, path] of cases) {
      for (const r of [await post(t, q), await get(t, q)]) {
        t.is(r.status, 400, JSON.stringify(q));
        t.is(r.body.error.code, 'invalid_input');
        t.is(r.body.error.details[0].path, path, JSON.stringify(q));
      }
    }
    const notJson = await getJson(
      `${t.context.stack.baseUrl}/v1/query/explore?site_id=${t.context.a.siteId}&q=%7Bnope`,
      auth(t.context.a),
    );
    t.is(notJson.status, 400);
    t.is(notJson.body.error.details[0].path, 'q');
    const missing = await getJson(
      `${t.context.stack.baseUrl}/v1/query/explore?site_id=${t.context.a.siteId}`,
      auth(t.context.a),
    );
    t.is(missing.body.error.details[0].path, 'q');
    const noKey = await getJson(`${t.context.stack.baseUrl}/v1/query/explore?site_id=${t.context.a.siteId}&q=%7B%7D`);
    t.is(noKey.status, 401);
  });

  test('/v1/openapi.json has both operations with typed request and answer schemas', async (t) => {
    const doc = (await getJson(`${t.context.stack.baseUrl}/v1/openapi.json`)).body;
    const op = doc.paths['/v1/query/explore'];
    t.truthy(op?.get && op?.post);
    t.deepEqual(op.get.parameters.map((p: { name: string }) => p.name).sort(), ['environment', 'q', 'site_id']);
    const body = JSON.stringify(op.post.requestBody.content['application/json'].schema);
    for (const word of ['window_days', 'filters', 'output', 'event_type', 'bounce_rate', 'cohort', 'is_not'])
      t.true(body.includes(word), word);
    for (const method of ['get', 'post']) {
      const answer = JSON.stringify(op[method].responses['200'].content['application/json'].schema);
      for (const word of ['took_ms', 'truncated', 'rows_scanned', 'sessions', 'groups', 'unit'])
        t.true(answer.includes(word), `${method} ${word}`);
      t.truthy(op[method].responses['400'] && op[method].responses['503']);
    }
  });

  // Serial, so it runs before the others: on the embedded database the abandoned statement holds the one connection
  // until it ends, and the concurrent tests' queries would wait behind it.
  test.serial(
    'a query past its statement timeout is a 503 that says so, and the database answers the next query',
    async (t) => {
      const { db, kind } = t.context.stack.infra.database;
      // A site of its own: the other tests run at the same time and count site A's sessions.
      const site = (await t.context.stack.newTenant()).siteId;
      // Enough rows that no plan answers in a millisecond.
      const bulk: Dataset = { sessions: [], events: [] };
      const t0 = Date.now() - 2 * DAY;
      for (let i = 0; i < (kind === 'postgres' ? 3000 : 400); i++) {
        const evs: TestEvent[] = [0, 1, 2, 3].map((k) => ({
          site_id: site,
          session_id: `bulk-${i}`,
          ts: t0 + i * 1000 + k,
          type: k === 3 ? 'signal' : 'page_view',
          page: `/p${(i * 7 + k) % 300}`,
          signal: k === 3 ? 'rage_click' : null,
          value: null,
        }));
        bulk.events.push(...evs);
        bulk.sessions.push(
          deriveSession(
            {
              site_id: site,
              id: `bulk-${i}`,
              device: 'desktop',
              source: 'bulk',
              app_version: null,
              environment: 'staging',
            },
            evs,
          ),
        );
      }
      await insertDataset(db, bulk);
      const query = ExploreQuerySchema.parse({
        window_days: 90,
        filters: [{ field: 'page', op: 'contains', value: '1' }],
        output: { mode: 'measure', metric: 'avg_dwell_ms', group_by: 'page' },
      });
      const err = await t.throwsAsync(
        explore({ db, kind, timeoutMs: 1 }, { siteId: site, environment: 'staging', query, now: new Date() }),
      );
      t.like(err, { status: 503, code: 'unavailable' });
      t.regex(err!.message, /statement timeout of 1 ms|1 ms statement timeout/);
      const after = await explore(
        { db, kind, timeoutMs: 60_000 },
        { siteId: site, environment: 'staging', query, now: new Date() },
      );
      t.true(after.result.mode === 'measure' && after.result.sessions > 0);
    },
  );
}
