import test from 'ava';
import { sql } from 'kysely';
import { useStack } from '../testing/stack.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson, postJson } from '../../shared/testing/http-client.ts';

// The embedded default: PGlite with TimescaleDB, in-process bus and limiter. This is the hypertable path.
const stack = useStack(test, { embedded: true });

test.serial('migrations create hypertables with retention and compression policies on TimescaleDB', async (t) => {
  const db = stack.infra.database.db;
  t.is(stack.infra.database.kind, 'pglite');
  const { rows } = await sql<{
    hypertable_name: string;
  }>`select hypertable_name from timescaledb_information.hypertables order by 1`.execute(db);
  t.deepEqual(
    rows.map((r) => r.hypertable_name),
    ['events', 'journey_steps', 'page_heatmap_hours', 'page_scores', 'score_history', 'signals', 'site_score_days'],
  );
  const jobs = await sql<{ proc_name: string; hypertable_name: string }>`
    select proc_name, hypertable_name from timescaledb_information.jobs where hypertable_name is not null order by 2, 1`.execute(
    db,
  );
  const policies = jobs.rows.map((j) => `${j.hypertable_name}:${j.proc_name}`);
  for (const p of [
    'events:policy_retention',
    'events:policy_compression',
    'signals:policy_retention',
    'signals:policy_compression',
    'journey_steps:policy_retention',
    'page_heatmap_hours:policy_retention',
    'page_scores:policy_retention',
    'score_history:policy_retention',
    'site_score_days:policy_retention',
  ]) {
    t.true(policies.includes(p), p);
  }
});

test.serial(
  "the processor's tick runs TimescaleDB's retention itself (no background worker does inside PGlite): raw rows past 90 days go",
  async (t) => {
    const db = stack.infra.database.db;
    // Raw tables take 30-day chunks here (migration 0450): a row 91 days old may share its chunk with one 89 days
    // old, which a policy cannot drop; the tick deletes it from there.
    const { rows: intervals } = await sql<{ days: number }>`
      select extract(day from time_interval)::int as days from timescaledb_information.dimensions
      where hypertable_name in ('events', 'signals', 'journey_steps', 'page_heatmap_hours')`.execute(db);
    t.deepEqual(
      intervals.map((r) => r.days),
      [30, 30, 30, 30],
    );
    const { siteId } = await stack.newTenant();
    const row = (session: string, age: string, page: string) =>
      sql`(gen_random_uuid(), ${siteId}, ${session}, now() - ${age}::interval, now(), 'page_view', ${page}, 'desktop')`;
    await sql`insert into events (id, site_id, session_id, ts, received_at, type, page, device) values
    ${sql.join([
      row('r-100', '100 days', '/retention-100'),
      row('r-91', '91 days', '/retention-91'),
      row('r-89', '89 days', '/retention-89'),
      row('r-1', '1 day', '/retention-1'),
    ])}`.execute(db);
    const pages = async () =>
      (
        await sql<{
          page: string;
        }>`select page from events where site_id = ${siteId} and page like '/retention-%' order by page`.execute(db)
      ).rows.map((r) => r.page);
    t.deepEqual(await pages(), ['/retention-1', '/retention-100', '/retention-89', '/retention-91']);
    await stack.tick();
    t.deepEqual(await pages(), ['/retention-1', '/retention-89'], 'the rows past 90 days went, chunk or not');
  },
);

test.serial('embedded end to end: batch → stored → scored → read API, duplicates stored once', async (t) => {
  const { tenant } = stack;
  const batch = sdkBatch({ page: '/pricing', events: 5, signal: 'dead_click' });
  const auth = { authorization: `Bearer ${tenant.publishableKey}` };
  t.is((await postJson(`${stack.baseUrl}/v1/ingest`, batch, auth)).status, 202);
  t.deepEqual((await postJson(`${stack.baseUrl}/v1/ingest`, batch, auth)).body.data, { accepted: 0, duplicates: 5 });
  const scores = await eventually(async () => {
    const r = await getJson(`${stack.baseUrl}/v1/query/scores?site_id=${tenant.siteId}`, {
      authorization: `Bearer ${tenant.secretKey}`,
    });
    return r.body.data.pages.length > 0 ? r.body.data : undefined;
  });
  t.is(scores.pages[0].page, '/pricing');
  t.is(scores.pages[0].dominant_signal, 'dead_click');
  const n = await sql<{ n: number }>`select count(*)::int as n from events where site_id = ${tenant.siteId}`.execute(
    stack.infra.database.db,
  );
  t.is(n.rows[0].n, 5);
});
