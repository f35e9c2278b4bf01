import test from 'ava';
import { sql } from 'kysely';
import { type TestStack } from '../testing/stack.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { postJson } from '../../shared/testing/http-client.ts';
import { apiClient } from '../../shared/testing/http-client.ts';
import { useStack } from '../testing/stack.ts';

// Hostile input at the edge: what ingest answers 202 to must always be stored, and nothing answers 500. Run on the
// PostgreSQL server and on the embedded PGlite (where a deeply nested jsonb used to crash the database itself).

const nested = (levels: number): unknown => {
  let v: unknown = 1;
  for (let i = 1; i < levels; i++) v = [v];
  return v;
};

const stacks: Record<string, TestStack> = { postgres: useStack(test), embedded: useStack(test, { embedded: true }) };

for (const kind of ['postgres', 'embedded'] as const) {
  test(`${kind}: meta nested past 8 levels or thousands deep is a 400 naming the field; NUL and lone surrogates are stored as U+FFFD`, async (t) => {
    const stack = stacks[kind];
    const db = stack.infra.database.db;
    const auth = { authorization: `Bearer ${stack.tenant.publishableKey}` };
    const ingest = (b: unknown) => postJson(`${stack.baseUrl}/v1/ingest`, b, auth);

    for (const levels of [9, 900, 4000, 100_000]) {
      const b = sdkBatch({ events: 1 });
      b.events[0].meta = { deep: 'DEEP' };
      // Written out by hand: JSON.stringify itself overflows the stack on such values.
      const r = await ingest(
        JSON.stringify(b).replace('"DEEP"', `${'['.repeat(levels - 1)}1${']'.repeat(levels - 1)}`),
      );
      t.is(r.status, 400, `${levels} levels`);
      t.is(r.body.error.code, 'invalid_input');
      t.true(String(r.body.error.details[0].path).startsWith('events[0].meta'), r.body.error.details[0].path);
    }
    const eight = sdkBatch({ events: 1 });
    eight.events[0].meta = { deep: nested(7) }; // meta itself is level 1
    t.is((await ingest(eight)).status, 202, 'exactly 8 levels is accepted');

    const hostile = sdkBatch({ events: 3, page: '/pay\u0000ment' });
    hostile.session_id = 'ses-\u0000-x';
    hostile.events[1].label = 'Pay\u0000 now \ud800';
    hostile.events[1].selector = '#pay\udc00';
    hostile.events[2].meta = { 'k\u0000ey': 'v\u0000', lone: '\ud83d', pair: '\ud83d\ude00', list: ['\u0000'] };
    (hostile.context as Record<string, unknown>).referrer = 'https://x.example/\u0000';
    const r = await ingest(hostile);
    t.is(r.status, 202, JSON.stringify(r.body));

    const ids = [...hostile.events, ...eight.events].map((e) => e.id as string);
    const rows = await eventually(
      async () => {
        const got = await sql<{
          id: string;
          label: string | null;
          selector: string | null;
          page: string;
          session_id: string;
          meta: unknown;
        }>`
        select id::text, label, selector, page, session_id, meta from events where id::text = any(${ids})`.execute(db);
        return got.rows.length === ids.length ? got.rows : undefined;
      },
      { timeoutMs: 30_000 },
    );
    const byId = new Map(rows.map((x) => [x.id, x]));
    const one = byId.get(hostile.events[1].id as string)!;
    t.is(one.label, 'Pay\uFFFD now \uFFFD');
    t.is(one.selector, '#pay\uFFFD');
    t.is(one.page, '/pay\uFFFDment');
    t.is(one.session_id, 'ses-\uFFFD-x');
    t.deepEqual(byId.get(hostile.events[2].id as string)!.meta, {
      'k\uFFFDey': 'v\uFFFD',
      lone: '\uFFFD',
      pair: '\ud83d\ude00',
      list: ['\uFFFD'],
    });
    const dead = await sql<{ n: number }>`select count(*)::int as n from dead_letters`.execute(db);
    t.is(dead.rows[0].n, 0, 'nothing accepted was dead-lettered');

    // The database (PGlite above all) is still healthy: a plain batch goes through.
    const after = sdkBatch({ events: 2 });
    t.is((await ingest(after)).status, 202);
    await eventually(
      async () =>
        (
          await sql<{
            n: number;
          }>`select count(*)::int as n from events where id = ${after.events[0].id as string}`.execute(db)
        ).rows[0].n === 1,
      { timeoutMs: 30_000 },
    );
  });

  test(`${kind}: NUL and lone surrogates in API bodies, query parameters and path segments are 400 naming the field, never 500`, async (t) => {
    const stack = stacks[kind];
    const call = apiClient(stack.baseUrl);
    const token = stack.tenant.owner.token;
    const site = stack.tenant.siteId;
    const cases: { method: 'GET' | 'POST' | 'PATCH'; path: string; body?: unknown; field: string }[] = [
      {
        method: 'POST',
        path: '/v1/manage/site',
        body: { name: 'shop\u0000', url: 'https://shop.example' },
        field: 'name',
      },
      {
        method: 'POST',
        path: '/v1/manage/site',
        body: { name: 'shop \ud800', url: 'https://shop.example' },
        field: 'name',
      },
      { method: 'PATCH', path: `/v1/manage/site/${site}`, body: { name: 'x\u0000' }, field: 'name' },
      {
        method: 'POST',
        path: '/v1/manage/annotations',
        body: { site_id: site, message: 'deploy\u0000' },
        field: 'message',
      },
      {
        method: 'POST',
        path: '/v1/manage/site',
        body: { name: 'shop', url: 'https://shop.example', ['x\u0000']: 1 },
        field: 'x\uFFFD',
      },
      { method: 'POST', path: '/v1/manage/site', body: { name: nested(40) }, field: 'name' },
      { method: 'GET', path: `/v1/query/issues?site_id=${site}&status=%00`, field: 'status' },
      { method: 'GET', path: `/v1/query/scores?site_id=${site}&page=%2Fa%00b`, field: 'page' },
      { method: 'GET', path: `/v1/query/raw?site_id=${site}&table=events&sort=%00`, field: 'sort' },
      { method: 'GET', path: `/v1/query/issues/%00?site_id=${site}`, field: 'path' },
      { method: 'PATCH', path: `/v1/manage/site/%00`, body: { name: 'x' }, field: 'path' },
    ];
    for (const c of cases) {
      const r = await call(c.method, c.path, { token, body: c.body });
      t.is(r.status, 400, `${c.method} ${c.path}: ${r.text}`);
      t.is(r.body?.error?.code, 'invalid_input', c.path);
      t.true(String(r.body?.error?.details?.[0]?.path ?? '').startsWith(c.field), `${c.path}: ${r.text}`);
    }
    // A body that only encodes a surrogate pair (an emoji) is fine.
    const ok = await call('POST', '/v1/manage/annotations', {
      token,
      body: { site_id: site, message: 'shipped \ud83d\ude80' },
    });
    t.is(ok.status, 201, ok.text);
    t.is(ok.body.data.message, 'shipped \ud83d\ude80');
  });
}
