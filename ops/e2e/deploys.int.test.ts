import test from 'ava';
import { randomUUID } from 'node:crypto';
import { startTestStack, useStack } from '../testing/stack.ts';
import { assertSameNotFound, getJson, postJson } from '../../shared/testing/http-client.ts';
import { issueApiKey } from '../../shared/tenancy/provision.ts';
import { insertPageScoreRow } from '../testing/rows.ts';

const stack = useStack(test, { processor: false });

const bearer = (k: string) => ({ authorization: `Bearer ${k}` });

test('POST /v1/deploys records a deploy: 201, before set, after null; deploy.recorded is queued in the same transaction', async (t) => {
  const tenant = await stack.newTenant();
  const r = await postJson(
    `${stack.baseUrl}/v1/deploys`,
    { version: '1.4.0', commit_sha: 'abc1234', url: 'https://ci.example/run/1', description: 'checkout fix' },
    bearer(tenant.secretKey),
  );
  t.is(r.status, 201, JSON.stringify(r.body));
  t.is(r.body.error, null);
  const d = r.body.data;
  t.like(d, {
    site_id: tenant.siteId,
    version: '1.4.0',
    environment: 'production',
    commit_sha: 'abc1234',
    confusion_before: 0,
    confusion_after: null,
    delta: null,
    frozen: false,
    cohort: null,
    verdict: 'WARN',
    related_issues: [],
  });
  t.regex(d.id, /^[0-9a-f-]{36}$/);
  const db = stack.infra.database.db;
  const outbox = await db.selectFrom('outbox').selectAll().where('msg_id', '=', `deploy.recorded:${d.id}`).execute();
  t.is(outbox.length, 1);
  t.is(outbox[0].subject_kind, 'deploy.recorded');
  t.like(outbox[0].payload as Record<string, unknown>, { event: 'deploy.recorded' });
  const audit = await db.selectFrom('audit_log').select('action').where('target_id', '=', d.id).execute();
  t.deepEqual(
    audit.map((a) => a.action),
    ['deploy.record'],
  );
});

test("confusion_before is the site's current overall score for the environment", async (t) => {
  const tenant = await stack.newTenant();
  const db = stack.infra.database.db;
  await insertPageScoreRow(db, tenant.siteId, { page: '/a', score: 40, sessions: 30 });
  await insertPageScoreRow(db, tenant.siteId, { page: '/b', score: 10, sessions: 10 });
  // Staging's own page scores: a staging deploy's before is staging's overall score, production's stay out of it.
  await insertPageScoreRow(db, tenant.siteId, { environment: 'staging', page: '/a', score: 12.5, sessions: 40 });
  const prod = await postJson(`${stack.baseUrl}/v1/deploys`, { version: '2.0.0' }, bearer(tenant.secretKey));
  t.is(prod.body.data.confusion_before, 32.5, '(40×30 + 10×10) / 40');
  const staging = await postJson(
    `${stack.baseUrl}/v1/deploys`,
    { version: '2.0.0', environment: 'staging' },
    bearer(tenant.secretKey),
  );
  t.is(staging.status, 201);
  t.not(staging.body.data.id, prod.body.data.id, 'the same version in another environment is another deploy');
  t.is(staging.body.data.confusion_before, 12.5);
});

test('a retried call is not a second deploy: Idempotency-Key (24 h) and the same version within 10 minutes answer the first record', async (t) => {
  const tenant = await stack.newTenant();
  const db = stack.infra.database.db;
  const key = `ci-run-${randomUUID()}`;
  const first = await postJson(
    `${stack.baseUrl}/v1/deploys`,
    { version: '3.0.0' },
    { ...bearer(tenant.secretKey), 'idempotency-key': key },
  );
  t.is(first.status, 201);
  t.is(first.headers.get('idempotent-replayed'), null);
  const again = await postJson(
    `${stack.baseUrl}/v1/deploys`,
    { version: '3.0.0' },
    { ...bearer(tenant.secretKey), 'idempotency-key': key },
  );
  t.is(again.status, 201);
  t.is(again.headers.get('idempotent-replayed'), 'true');
  t.is(again.body.data.id, first.body.data.id);
  const conflict = await postJson(
    `${stack.baseUrl}/v1/deploys`,
    { version: '3.0.1' },
    { ...bearer(tenant.secretKey), 'idempotency-key': key },
  );
  t.is(conflict.status, 409);
  t.is(conflict.body.error.code, 'conflict');
  // Same version without a key, concurrently: one deploy.
  const same = await Promise.all(
    [1, 2, 3, 4].map(() => postJson(`${stack.baseUrl}/v1/deploys`, { version: '3.1.0' }, bearer(tenant.secretKey))),
  );
  t.deepEqual(
    same.map((s) => s.status),
    [201, 201, 201, 201],
  );
  t.is(new Set(same.map((s) => s.body.data.id)).size, 1);
  // Outside the windows: a new deploy.
  await db
    .updateTable('deploys')
    .set({ recorded_at: new Date(Date.now() - 11 * 60_000) })
    .where('version', '=', '3.1.0')
    .where('site_id', '=', tenant.siteId)
    .execute();
  const later = await postJson(`${stack.baseUrl}/v1/deploys`, { version: '3.1.0' }, bearer(tenant.secretKey));
  t.not(later.body.data.id, same[0].body.data.id);
  await db
    .updateTable('deploys')
    .set({ recorded_at: new Date(Date.now() - 25 * 3_600_000) })
    .where('id', '=', first.body.data.id)
    .execute();
  const expired = await postJson(
    `${stack.baseUrl}/v1/deploys`,
    { version: '3.0.0' },
    { ...bearer(tenant.secretKey), 'idempotency-key': key },
  );
  t.not(expired.body.data.id, first.body.data.id);
  const n = await db
    .selectFrom('deploys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('site_id', '=', tenant.siteId)
    .executeTakeFirstOrThrow();
  t.is(Number(n.n), 4);
});

test('bad input and credentials: missing version, environment qa, version 42, unknown field, bounds; publishable key 403, no key 401', async (t) => {
  const tenant = await stack.newTenant();
  const post = (body: unknown, headers = bearer(tenant.secretKey)) =>
    postJson(`${stack.baseUrl}/v1/deploys`, body, headers);
  for (const [body, path] of [
    [{}, 'version'],
    [{ version: '1', environment: 'qa' }, 'environment'],
    [{ version: 42 }, 'version'],
    [{ version: '' }, 'version'],
    [{ version: '   ' }, 'version'],
    [{ version: 'x'.repeat(129) }, 'version'],
    [{ version: '1', colour: 'blue' }, 'colour'],
    [{ version: '1', commit_sha: 'not-hex' }, 'commit_sha'],
    [{ version: '1', url: 'javascript:alert(1)' }, 'url'],
    [{ version: '1', description: 'd'.repeat(1001) }, 'description'],
    [{ version: '1', site_id: 'nope' }, 'site_id'],
  ] as const) {
    const r = await post(body);
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.code, 'invalid_input');
    t.is(r.body.error.details[0].path, path, JSON.stringify(body));
  }
  t.is((await post({ version: 'x'.repeat(128) })).status, 201);
  for (const body of [{ version: 'v\u0000' }, { version: 'v\n2' }, { version: '1', description: 'a\u0000b' }]) {
    const r = await post(body);
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.body.error.details[0].path, 'version' in body && body.version !== '1' ? 'version' : 'description');
  }
  t.is((await post({ version: '1', description: 'line one\nline two' })).status, 201);
  t.is((await post('{"version":')).status, 400);
  const huge = await post({ version: '1', description: 'x'.repeat(70_000) });
  t.is(huge.status, 413);
  t.is(huge.body.error.code, 'payload_too_large');
  const depth = 6000;
  const nested = `${'{"version":"1","n":'.repeat(depth)}{}${'}'.repeat(depth)}`.slice(0, 63_000);
  const deep = await post(`${'{"n":'.repeat(depth)}1${'}'.repeat(depth)}`);
  t.is(deep.status, 400, 'deeply nested body: an unknown field, not a crash');
  t.is((await post(nested)).status, 400, 'cut-off nested body: malformed JSON');
  t.is((await post([1, 2])).status, 400);
  const badKey = await postJson(
    `${stack.baseUrl}/v1/deploys`,
    { version: '1' },
    { ...bearer(tenant.secretKey), 'idempotency-key': 'has space' },
  );
  t.is(badKey.status, 400);
  t.is(badKey.body.error.details[0].path, 'Idempotency-Key');
  const pub = await post({ version: '1' }, bearer(tenant.publishableKey));
  t.is(pub.status, 403);
  t.is(pub.body.error.code, 'forbidden');
  const none = await postJson(`${stack.baseUrl}/v1/deploys`, { version: '1' });
  t.is(none.status, 401);
  t.is(none.body.error.code, 'unauthorized');
  const readOnly = await issueApiKey(stack.infra.database.db, {
    orgId: tenant.orgId,
    siteId: tenant.siteId,
    type: 'secret',
    scopes: ['query:read'],
  });
  t.is((await post({ version: '1' }, bearer(readOnly.key))).status, 403);
  const other = await stack.newTenant();
  t.is((await post({ version: '1', site_id: other.siteId })).status, 404, "another tenant's site");
  const viewer = await stack.newUser(tenant, 'viewer');
  t.is((await post({ version: '1', site_id: tenant.siteId }, bearer(viewer.token))).status, 403);
  const member = await stack.newUser(tenant, 'member');
  t.is((await post({ version: 'by-member', site_id: tenant.siteId }, bearer(member.token))).status, 201);
});

test('GET /v1/query/deploys lists newest first per environment with bounds; detail 404s like issues; raw table=deploys', async (t) => {
  const tenant = await stack.newTenant();
  const other = await stack.newTenant();
  const auth = bearer(tenant.secretKey);
  const ids: string[] = [];
  for (const v of ['a', 'b', 'c'])
    ids.push((await postJson(`${stack.baseUrl}/v1/deploys`, { version: v }, auth)).body.data.id);
  const staging = (await postJson(`${stack.baseUrl}/v1/deploys`, { version: 's', environment: 'staging' }, auth)).body
    .data.id;
  const theirs = (await postJson(`${stack.baseUrl}/v1/deploys`, { version: 'x' }, bearer(other.secretKey))).body.data
    .id;
  const list = await getJson(`${stack.baseUrl}/v1/query/deploys?site_id=${tenant.siteId}`, auth);
  t.is(list.status, 200);
  t.deepEqual(
    list.body.data.deploys.map((d: { id: string }) => d.id),
    [...ids].reverse(),
  );
  t.is(list.body.data.total, 3);
  t.deepEqual(
    (
      await getJson(`${stack.baseUrl}/v1/query/deploys?site_id=${tenant.siteId}&environment=staging`, auth)
    ).body.data.deploys.map((d: { id: string }) => d.id),
    [staging],
  );
  t.deepEqual(
    (
      await getJson(`${stack.baseUrl}/v1/deploys?site_id=${tenant.siteId}&limit=1&offset=1`, auth)
    ).body.data.deploys.map((d: { id: string }) => d.id),
    [ids[1]],
  );
  for (const bad of ['environment=qa', 'limit=0', 'limit=101', 'offset=-1'])
    t.is((await getJson(`${stack.baseUrl}/v1/query/deploys?site_id=${tenant.siteId}&${bad}`, auth)).status, 400, bad);
  const one = await getJson(`${stack.baseUrl}/v1/query/deploys/${ids[0]}?site_id=${tenant.siteId}`, auth);
  t.is(one.status, 200);
  t.like(one.body.data, { id: ids[0], version: 'a', verdict: 'WARN' });
  t.deepEqual((await getJson(`${stack.baseUrl}/v1/deploys/${ids[0]}?site_id=${tenant.siteId}`, auth)).body, one.body);
  const deploy = (id: string) => `${stack.baseUrl}/v1/query/deploys/${id}?site_id=${tenant.siteId}`;
  await assertSameNotFound(t, auth, deploy(randomUUID()), [deploy(theirs), deploy('nope')]);
  t.is((await getJson(`${stack.baseUrl}/v1/query/deploys?site_id=${other.siteId}`, auth)).status, 404);
  const raw = await getJson(`${stack.baseUrl}/v1/query/raw?site_id=${tenant.siteId}&table=deploys`, auth);
  t.is(raw.status, 200);
  t.is(raw.body.data.sort, 'recorded_at');
  t.is(raw.body.data.rows.length, 3, "raw rows are production's unless environment says otherwise");
  const rawStaging = await getJson(
    `${stack.baseUrl}/v1/query/raw?site_id=${tenant.siteId}&table=deploys&environment=staging`,
    auth,
  );
  t.deepEqual(
    rawStaging.body.data.rows.map((r: { id: string }) => r.id),
    [staging],
  );
});

test('the embedded database (PGlite + TimescaleDB) records deploys and runs the deploy cycle', async (t) => {
  const embedded = await startTestStack({ embedded: true });
  try {
    const { tenant } = embedded;
    const r = await postJson(`${embedded.baseUrl}/v1/deploys`, { version: 'e1' }, bearer(tenant.secretKey));
    t.is(r.status, 201, JSON.stringify(r.body));
    const batch = {
      session_id: 's-emb',
      sent_at: new Date().toISOString(),
      context: { device: 'desktop', viewport: { w: 1, h: 1 }, environment: 'staging' },
      events: [{ id: randomUUID(), type: 'page_view', ts: new Date().toISOString(), page: '/x' }],
    };
    t.is((await postJson(`${embedded.baseUrl}/v1/ingest`, batch, bearer(tenant.publishableKey))).status, 202);
    const staging = await postJson(
      `${embedded.baseUrl}/v1/deploys`,
      { version: 'e1', environment: 'staging' },
      bearer(tenant.secretKey),
    );
    t.is(staging.status, 201);
    await embedded.tick();
    const d = await getJson(
      `${embedded.baseUrl}/v1/query/deploys/${r.body.data.id}?site_id=${tenant.siteId}`,
      bearer(tenant.secretKey),
    );
    t.is(d.status, 200);
    const row = await embedded.infra.database.db
      .selectFrom('deploys')
      .select(['measured_until'])
      .where('id', '=', r.body.data.id)
      .executeTakeFirstOrThrow();
    t.truthy(row.measured_until, 'the cycle measured it');
  } finally {
    await embedded.stop();
  }
});
