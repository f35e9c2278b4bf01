import test from 'ava';
import { sql } from 'kysely';
import { startTestStack } from '../testing/stack.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { postJson } from '../../shared/testing/http-client.ts';

test('a device whose clock is an hour fast is accepted and its events stored at our time; late events make no phantom page', async (t) => {
  const stack = await startTestStack();
  t.teardown(() => stack.stop());
  const db = stack.infra.database.db;
  const auth = { authorization: `Bearer ${stack.tenant.publishableKey}` };

  // Everything the device stamps is 1 h 20 min ahead: without the correction every event is "more than 1 hour in
  // the future" and the whole batch is refused (400, which the SDK drops: the visitor's data lost without a trace).
  const skew = 80 * 60_000;
  const fast = sdkBatch({ events: 3, page: '/fast-clock', ts: Date.now() + skew });
  const r = await postJson(`${stack.baseUrl}/v1/ingest`, fast, auth);
  t.is(r.status, 202, JSON.stringify(r.body));
  const stored = await eventually(async () => {
    const rows = await sql<{
      ms: number;
    }>`select (extract(epoch from ts) * 1000)::float8 as ms from events where session_id = ${fast.session_id}`.execute(
      db,
    );
    return rows.rows.length === 3 ? rows.rows : undefined;
  });
  for (const row of stored)
    t.true(Math.abs(row.ms - Date.now()) < 2 * 60_000, `stored at ${new Date(row.ms).toISOString()}`);

  // A batch sent now with events from two days ago (an SDK that queued them offline): stored, but the page has no
  // session in the 24-hour window, so it gets no score row.
  const late = sdkBatch({ events: 2, page: '/only-old' });
  for (const e of late.events) e.ts = new Date(Date.now() - 2 * 86_400_000).toISOString();
  t.is((await postJson(`${stack.baseUrl}/v1/ingest`, late, auth)).status, 202);
  await eventually(
    async () =>
      (
        await sql<{ n: number }>`select count(*)::int as n from events where session_id = ${late.session_id}`.execute(
          db,
        )
      ).rows[0].n === 2,
  );
  await eventually(
    async () =>
      (await sql<{ n: number }>`select count(*)::int as n from page_scores where page = '/fast-clock'`.execute(db))
        .rows[0].n > 0,
  );
  await stack.tick();
  const phantom = await sql<{ n: number }>`select count(*)::int as n from page_scores where page = '/only-old'`.execute(
    db,
  );
  t.is(phantom.rows[0].n, 0, 'no score row for a page without sessions in the window');
});
