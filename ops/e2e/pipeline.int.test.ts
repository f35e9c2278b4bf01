import test from 'ava';
import { gzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { useStack } from '../testing/stack.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson, postJson } from '../../shared/testing/http-client.ts';

const stack = useStack(test, { env: { INGEST_BODY_LIMIT_BYTES: String(64 * 1024) } });

const ingest = (body: unknown, key = stack.tenant.publishableKey, headers: Record<string, string> = {}) =>
  postJson(`${stack.baseUrl}/v1/ingest`, body, { authorization: `Bearer ${key}`, ...headers });

const countRows = async (table: 'events' | 'signals' | 'sessions', siteId: string) =>
  Number(
    (
      await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)} where site_id = ${siteId}`.execute(
        stack.infra.database.db,
      )
    ).rows[0].n,
  );

test.serial('a batch is accepted (202), stored, and its page shows up with a score in /v1/query/scores', async (t) => {
  const { tenant } = stack;
  const batch = sdkBatch({ page: '/checkout', events: 4 });
  const res = await ingest(batch);
  t.is(res.status, 202);
  t.deepEqual(res.body, { data: { accepted: 4, duplicates: 0 }, error: null });

  await eventually(async () => (await countRows('events', tenant.siteId)) === 4);
  t.is(await countRows('signals', tenant.siteId), 3);
  t.is(await countRows('sessions', tenant.siteId), 1);

  const scores = await eventually(async () => {
    const r = await getJson(`${stack.baseUrl}/v1/query/scores?site_id=${tenant.siteId}`, {
      authorization: `Bearer ${tenant.secretKey}`,
    });
    return r.body.data.pages.length > 0 ? r : undefined;
  });
  t.is(scores.status, 200);
  t.is(scores.body.error, null);
  const data = scores.body.data;
  t.is(data.site_id, tenant.siteId);
  t.deepEqual(Object.keys(data.pages[0]).sort(), ['dominant_signal', 'page', 'score', 'trend']);
  t.is(data.pages[0].page, '/checkout');
  t.is(data.pages[0].dominant_signal, 'rage_click');
  t.true(data.pages[0].score > 0 && data.pages[0].score <= 100);
  t.true(['up', 'down', 'stable'].includes(data.overall_trend));
  t.is(data.overall_score, data.pages[0].score);
  t.deepEqual(data.site, {
    site_id: data.site_id,
    overall_score: data.overall_score,
    overall_trend: data.overall_trend,
    pages: data.pages,
  });
});

test.serial('pages are sorted by score, highest first', async (t) => {
  const tenant = await stack.newTenant();
  for (let i = 0; i < 3; i++) await ingest(sdkBatch({ page: '/calm', events: 1 }), tenant.publishableKey);
  for (let i = 0; i < 3; i++)
    await ingest(sdkBatch({ page: '/broken', events: 6, signal: 'dead_click' }), tenant.publishableKey);
  const r = await eventually(async () => {
    const r = await getJson(`${stack.baseUrl}/v1/query/scores?site_id=${tenant.siteId}`, {
      authorization: `Bearer ${tenant.secretKey}`,
    });
    return r.body.data.pages.length === 2 ? r : undefined;
  });
  t.deepEqual(
    r.body.data.pages.map((p: { page: string }) => p.page),
    ['/broken', '/calm'],
  );
  t.true(r.body.data.pages[0].score > r.body.data.pages[1].score);
});

test.serial('a retried batch and repeated events are stored once', async (t) => {
  const tenant = await stack.newTenant();
  const batch = sdkBatch({ events: 3 });
  t.deepEqual((await ingest(batch, tenant.publishableKey)).body.data, { accepted: 3, duplicates: 0 });
  // Same batch again (an SDK retry after a lost response): the stream drops it by its derived batch id.
  t.deepEqual((await ingest(batch, tenant.publishableKey)).body.data, { accepted: 0, duplicates: 3 });
  // The same events inside a new batch id reach the processor, which stores nothing new.
  const withId = { ...batch, batch_id: crypto.randomUUID() };
  t.is((await ingest(withId, tenant.publishableKey)).status, 202);
  // An event repeated inside one batch counts as a duplicate at once.
  const repeated = sdkBatch({ events: 2 });
  repeated.events.push(repeated.events[1]);
  t.deepEqual((await ingest(repeated, tenant.publishableKey)).body.data, { accepted: 2, duplicates: 1 });
  await eventually(async () => (await countRows('events', tenant.siteId)) === 5);
  await new Promise((r) => setTimeout(r, 1500));
  t.is(await countRows('events', tenant.siteId), 5);
  const session = await stack.infra.database.db
    .selectFrom('sessions')
    .selectAll()
    .where('site_id', '=', tenant.siteId)
    .where('id', '=', batch.session_id)
    .executeTakeFirstOrThrow();
  t.is(session.event_count, 3, 'session counters only count new events');
});

test.serial('event ids are any 8-4-4-4-12 hex id, in either case, and stored in lower case', async (t) => {
  const tenant = await stack.newTenant();
  const batch = sdkBatch({ events: 3 });
  const ids = [
    '00000000-0000-0000-0000-000000000001',
    '11111111-1111-1111-1111-111111111111',
    'ABCDEF01-2345-6789-ABCD-EF0123456789',
  ];
  batch.events.forEach((e, i) => (e.id = ids[i]));
  t.deepEqual((await ingest(batch, tenant.publishableKey)).body.data, { accepted: 3, duplicates: 0 });
  await eventually(async () => (await countRows('events', tenant.siteId)) === 3);
  const rows = await stack.infra.database.db
    .selectFrom('events')
    .select('id')
    .where('site_id', '=', tenant.siteId)
    .orderBy('id')
    .execute();
  t.deepEqual(
    rows.map((r) => r.id),
    ids.map((i) => i.toLowerCase()),
  );
});

test.serial(
  'a malformed batch is refused with 400 naming the event index and field, and nothing of it is stored',
  async (t) => {
    const tenant = await stack.newTenant();
    const batch = sdkBatch({ events: 4 });
    batch.events[2].x = 1001;
    delete batch.events[3].signal;
    const res = await ingest(batch, tenant.publishableKey);
    t.is(res.status, 400);
    t.is(res.body.data, null);
    t.is(res.body.error.code, 'invalid_input');
    t.is(res.body.error.status, 400);
    t.regex(res.body.error.message, /events\[2\]\.x/);
    t.deepEqual(res.body.error.details.map((d: { path: string }) => d.path).sort(), [
      'events[2].x',
      'events[3].signal',
    ]);
    const bad = [
      [{ ...sdkBatch(), events: [] }, 'events'],
      [{ ...sdkBatch(), context: { device: 'fridge', viewport: { w: 1, h: 1 } } }, 'context.device'],
      [{ ...sdkBatch(), events: [{ ...sdkBatch().events[0], id: 'not-a-uuid' }] }, 'events[0].id'],
      [
        { ...sdkBatch(), events: [{ ...sdkBatch().events[0], ts: new Date(Date.now() + 2 * 3600e3).toISOString() }] },
        'events[0].ts',
      ],
    ] as const;
    for (const [body, path] of bad) {
      const r = await ingest(body, tenant.publishableKey);
      t.is(r.status, 400, path);
      t.true(
        r.body.error.details.some((d: { path: string }) => d.path === path),
        `${path}: ${JSON.stringify(r.body.error.details)}`,
      );
    }
    t.is(
      (await postJson(`${stack.baseUrl}/v1/ingest`, '{not json', { authorization: `Bearer ${tenant.publishableKey}` }))
        .status,
      400,
    );
    await new Promise((r) => setTimeout(r, 1500));
    t.is(await countRows('events', tenant.siteId), 0);
  },
);

test.serial('unknown, malformed or wrong-type keys are 401/403', async (t) => {
  const batch = sdkBatch();
  const unknown = await ingest(batch, 'svc_pub_ThisKeyDoesNotExist000000000000');
  t.is(unknown.status, 401);
  t.is(unknown.body.error.code, 'unauthorized');
  t.is((await ingest(batch, 'garbage')).status, 401);
  t.is((await postJson(`${stack.baseUrl}/v1/ingest`, batch)).status, 401, 'no key at all');
  const secret = await ingest(batch, stack.tenant.secretKey);
  t.is(secret.status, 403, 'a secret key never ingests');
  t.is(secret.body.error.code, 'forbidden');
  const read = await getJson(`${stack.baseUrl}/v1/query/scores?site_id=${stack.tenant.siteId}`, {
    authorization: `Bearer ${stack.tenant.publishableKey}`,
  });
  t.is(read.status, 403, 'a publishable key never reads');
});

test.serial('an oversize body is 413 payload_too_large, also when gzip inflates past the limit', async (t) => {
  const big = sdkBatch({ events: 2 });
  (big.events[0] as Record<string, unknown>).meta = { pad: 'x'.repeat(2000) };
  const huge = { ...big, events: Array.from({ length: 400 }, () => ({ ...big.events[0], id: crypto.randomUUID() })) };
  const res = await ingest(huge);
  t.is(res.status, 413);
  t.is(res.body.error.code, 'payload_too_large');
  const zipped = gzipSync(JSON.stringify(huge));
  t.true(zipped.length < 64 * 1024);
  const r2 = await fetch(`${stack.baseUrl}/v1/ingest`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${stack.tenant.publishableKey}`,
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    },
    body: zipped,
  });
  t.is(r2.status, 413);
});

test.serial('gzip bodies and text/plain beacons with the key in the body are accepted', async (t) => {
  const tenant = await stack.newTenant();
  const zipped = gzipSync(JSON.stringify(sdkBatch({ events: 2 })));
  const r1 = await fetch(`${stack.baseUrl}/v1/ingest`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${tenant.publishableKey}`,
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    },
    body: zipped,
  });
  t.is(r1.status, 202);
  const beacon = await fetch(`${stack.baseUrl}/v1/ingest`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain;charset=UTF-8', origin: 'https://shop.example' },
    body: JSON.stringify({ ...sdkBatch({ events: 3 }), key: tenant.publishableKey }),
  });
  t.is(beacon.status, 202);
  t.is(beacon.headers.get('access-control-allow-origin'), '*');
  t.deepEqual((await beacon.json()).data, { accepted: 3, duplicates: 0 });
  await eventually(async () => (await countRows('events', tenant.siteId)) === 5);
  t.pass();
});

test.serial('CORS preflight is answered for browser origins', async (t) => {
  const res = await fetch(`${stack.baseUrl}/v1/ingest`, {
    method: 'OPTIONS',
    headers: {
      origin: 'https://shop.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,content-type',
    },
  });
  t.is(res.status, 204);
  t.is(res.headers.get('access-control-allow-origin'), '*');
  t.regex(res.headers.get('access-control-allow-headers') ?? '', /Authorization/i);
  t.regex(res.headers.get('access-control-allow-methods') ?? '', /POST/);
  // The router also takes /v1/ingest/, so CORS does too.
  const slash = await fetch(`${stack.baseUrl}/v1/ingest/`, {
    method: 'OPTIONS',
    headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' },
  });
  t.is(slash.status, 204);
  t.is(slash.headers.get('access-control-allow-origin'), '*');
});

test.serial(
  'the short form /v1/scores and the unversioned /query and /manage routes answer like their /v1 forms',
  async (t) => {
    const { tenant } = stack;
    const auth = { authorization: `Bearer ${tenant.secretKey}` };
    await eventually(
      async () =>
        (await getJson(`${stack.baseUrl}/v1/query/scores?site_id=${tenant.siteId}`, auth)).body.data.pages.length > 0,
    );
    const full = (await getJson(`${stack.baseUrl}/v1/query/scores?site_id=${tenant.siteId}`, auth)).body.data;
    const short = await getJson(`${stack.baseUrl}/v1/scores?site_id=${tenant.siteId}`, auth);
    t.is(short.status, 200);
    t.deepEqual(
      short.body.data.scores.map((s: { page: string; score: number; top_signal: string }) => [
        s.page,
        s.score,
        s.top_signal,
      ]),
      full.pages.map((p: { page: string; score: number; dominant_signal: string }) => [
        p.page,
        p.score,
        p.dominant_signal,
      ]),
    );
    const first = short.body.data.scores[0];
    t.deepEqual(Object.keys(first).sort(), ['issue_count', 'page', 'score', 'top_signal', 'trend', 'updated_at']);
    t.true(Number.isInteger(first.issue_count));
    t.false(Number.isNaN(Date.parse(first.updated_at)));

    const alt = await getJson(`${stack.baseUrl}/query/scores?site_id=${tenant.siteId}`, auth);
    t.deepEqual(alt.body, (await getJson(`${stack.baseUrl}/v1/query/scores?site_id=${tenant.siteId}`, auth)).body);
    const sites = await getJson(`${stack.baseUrl}/manage/site?org_id=${tenant.orgId}`, {
      authorization: `Bearer ${tenant.owner.token}`,
    });
    t.is(sites.status, 200);
    t.true(sites.body.data.sites.some((s: { id: string }) => s.id === tenant.siteId));
    t.is((await getJson(`${stack.baseUrl}/query/scores?site_id=${tenant.siteId}`)).status, 401, 'the same auth');
  },
);

test.serial('the read API scopes a secret key to its own site: another site is 404, like a random id', async (t) => {
  const other = await stack.newTenant();
  const auth = { authorization: `Bearer ${stack.tenant.secretKey}` };
  const foreign = await getJson(`${stack.baseUrl}/v1/query/scores?site_id=${other.siteId}`, auth);
  const random = await getJson(`${stack.baseUrl}/v1/query/scores?site_id=${crypto.randomUUID()}`, auth);
  t.is(foreign.status, 404);
  t.deepEqual(foreign.body, random.body);
  // Any 8-4-4-4-12 hex id is an id (404 when unknown, not 400), and case does not matter.
  const handMade = await getJson(`${stack.baseUrl}/v1/query/scores?site_id=11111111-1111-1111-1111-111111111111`, auth);
  t.deepEqual(handMade.body, random.body);
  const upper = await getJson(`${stack.baseUrl}/v1/query/scores?site_id=${stack.tenant.siteId.toUpperCase()}`, auth);
  t.is(upper.status, 200);
  t.is(upper.body.data.site_id, stack.tenant.siteId);
  const missing = await getJson(`${stack.baseUrl}/v1/query/scores`, auth);
  t.is(missing.status, 400);
  t.is(missing.body.error.details[0].path, 'site_id');
  t.is((await getJson(`${stack.baseUrl}/v1/query/scores?site_id=${stack.tenant.siteId}`)).status, 401);
});

test.serial(
  'every response, 404 and 405 included, is in the envelope; health, readiness and metrics answer',
  async (t) => {
    const nf = await getJson(`${stack.baseUrl}/v1/nothing-here`);
    t.deepEqual(nf.body.data, null);
    t.is(nf.body.error.code, 'not_found');
    const na = await fetch(`${stack.baseUrl}/v1/ingest`, { method: 'DELETE' });
    t.is(na.status, 405);
    t.is(na.headers.get('allow'), 'POST');
    const requestId = na.headers.get('x-request-id');
    t.regex(
      requestId ?? '',
      /^[0-9a-f-]{36}$/,
      'every answer, errors included, carries a request id (also in its log line)',
    );
    t.deepEqual((await na.json()).error, {
      code: 'method_not_allowed',
      status: 405,
      message: 'DELETE is not allowed on /v1/ingest; allowed: POST',
    });
    const given = await fetch(`${stack.baseUrl}/v1/nothing-here`, { headers: { 'x-request-id': 'lb-trace-12345678' } });
    t.is(given.headers.get('x-request-id'), 'lb-trace-12345678', "a proxy's request id is kept");
    // A method the router does not know at all is the same 405, not a crash.
    const odd = await fetch(`${stack.baseUrl}/v1/ingest`, { method: 'PROPFIND' });
    t.is(odd.status, 405);
    t.is((await odd.json()).error.code, 'method_not_allowed');
    // OPTIONS without a browser origin lists the route's methods, in the envelope.
    const options = await fetch(`${stack.baseUrl}/v1/query/scores`, { method: 'OPTIONS' });
    t.is(options.status, 200);
    t.deepEqual(await options.json(), { data: { allow: ['HEAD', 'GET'] }, error: null });
    t.is((await getJson(`${stack.baseUrl}/healthz`)).body.data.status, 'ok');
    const ready = await getJson(`${stack.baseUrl}/readyz`);
    t.is(ready.status, 200);
    t.deepEqual(ready.body.data.checks, { bus: 'ok', database: 'ok', redis: 'ok' });
    const metrics = await (await fetch(`${stack.baseUrl}/metrics`)).text();
    t.regex(metrics, /friction_http_requests_total/);
    t.regex(metrics, /friction_processor_events_total/);
    // What an operator watches: build, processor lag per partition, batch duration, dead letters, outbox backlog.
    t.regex(metrics, /^friction_build_info\{version="\d+\.\d+\.\d+",node="24\.[\d.]+"\} 1$/m);
    t.regex(metrics, /^friction_processor_lag_messages\{partition="0"\} \d+$/m);
    t.regex(metrics, /^friction_processor_lag_seconds\{partition="0"\} [\d.e-]+$/m);
    t.regex(metrics, /^friction_processor_batch_duration_seconds_count \d+$/m);
    t.regex(metrics, /^friction_processor_dead_letters_total \d+$/m);
    t.regex(metrics, /^friction_outbox_backlog \d+$/m);
  },
);
