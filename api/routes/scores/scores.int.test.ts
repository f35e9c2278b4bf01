import test, { type ExecutionContext } from 'ava';
import { sql } from 'kysely';
import { bearer, useStack, type TestStack, type TestTenant } from '../../../ops/testing/stack.ts';
import { sdkBatch } from '../../../ops/testing/sdk-batch.ts';
import { eventually } from '../../../shared/testing/eventually.ts';
import { postJson } from '../../../shared/testing/http-client.ts';
import { encodeJson } from '../../../shared/http/conditional-get.ts';
import { ok } from '../../../shared/http/envelope.ts';
import { siteScores } from '../../read-models/site-scores.ts';

// GET /v1/query/scores through the whole stack, whose answers the API keeps in memory (read-models/
// scores-answer-cache.ts): a repeated request answers the same bytes and ETag (304 on If-None-Match), the processor's
// batches change it at once, it is always what the route computes from the database, and another tenant's key never
// gets it. On the PostgreSQL server and on the embedded default.

const stacks: Record<string, TestStack> = { postgres: useStack(test), embedded: useStack(test, { embedded: true }) };

const scoresUrl = (stack: TestStack, siteId: string) => `${stack.baseUrl}/v1/query/scores?site_id=${siteId}`;

async function get(stack: TestStack, tenant: TestTenant, siteId = tenant.siteId, headers: Record<string, string> = {}) {
  const res = await fetch(scoresUrl(stack, siteId), { headers: { ...bearer(tenant), ...headers } });
  return { status: res.status, etag: res.headers.get('etag'), bytes: Buffer.from(await res.arrayBuffer()) };
}

/** The answer equals the one computed from the database just before or just after it (the clock moves between). */
async function assertFresh(t: ExecutionContext, stack: TestStack, tenant: TestTenant) {
  const db = stack.infra.database.db;
  const compute = async () => {
    const site = await siteScores(db, tenant.siteId, 'production', new Date());
    return encodeJson(ok({ ...site, site }));
  };
  const before = await compute();
  const got = await get(stack, tenant);
  const after = await compute();
  t.is(got.status, 200);
  t.true(got.bytes.equals(before.json) || got.bytes.equals(after.json), 'the answer is what the route computes');
  t.true(got.etag === before.etag || got.etag === after.etag);
  return got;
}

const pagesOf = (bytes: Buffer) =>
  (JSON.parse(bytes.toString()) as { data: { pages: { page: string }[] } }).data.pages.map((p) => p.page);

for (const kind of ['postgres', 'embedded'] as const) {
  test(`${kind}: GET /v1/query/scores answers repeated requests with the same bytes, follows the processor's writes, and stays the tenant's`, async (t) => {
    const stack = stacks[kind];
    const db = stack.infra.database.db;
    const a = await stack.newTenant();
    const b = await stack.newTenant();
    const ingest = (tenant: TestTenant, page: string) =>
      postJson(`${stack.baseUrl}/v1/ingest`, sdkBatch({ page, events: 5 }), {
        authorization: `Bearer ${tenant.publishableKey}`,
      });
    const currentPages = async (siteId: string) =>
      (
        await sql<{ n: number }>`select count(*)::int as n from page_current_scores where site_id = ${siteId}`.execute(
          db,
        )
      ).rows[0].n;
    t.is((await ingest(a, '/checkout')).status, 202);
    t.is((await ingest(b, '/b-only')).status, 202);
    await eventually(async () => (await currentPages(a.siteId)) === 1 && (await currentPages(b.siteId)) === 1);

    const first = await assertFresh(t, stack, a);
    const second = await assertFresh(t, stack, a);
    t.true(second.bytes.equals(first.bytes));
    t.is(second.etag, first.etag);
    t.deepEqual(pagesOf(first.bytes), ['/checkout']);
    const notModified = await get(stack, a, a.siteId, { 'if-none-match': first.etag ?? '' });
    t.is(notModified.status, 304);
    t.is(notModified.bytes.length, 0);

    // A processor batch with a new page: the next answer has it.
    t.is((await ingest(a, '/cart')).status, 202);
    await eventually(async () => (await currentPages(a.siteId)) === 2);
    const changed = await assertFresh(t, stack, a);
    t.deepEqual(pagesOf(changed.bytes).sort(), ['/cart', '/checkout']);
    t.not(changed.etag, first.etag);
    t.is((await get(stack, a, a.siteId, { 'if-none-match': first.etag ?? '' })).status, 200);

    // Another tenant's key: 404 on this site, its own site's answer on its own.
    const foreign = await get(stack, b, a.siteId);
    t.is(foreign.status, 404);
    t.false(foreign.bytes.toString().includes('/checkout'));
    const own = await assertFresh(t, stack, b);
    t.deepEqual(pagesOf(own.bytes), ['/b-only']);
  });
}
