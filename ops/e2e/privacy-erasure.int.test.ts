import test from 'ava';
import { sql } from 'kysely';
import { recomputeSiteCommand } from '../../processor/recompute-site.ts';
import { createLogger } from '../../shared/logger.ts';
import { apiClient } from '../../shared/testing/http-client.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { postJson } from '../../shared/testing/http-client.ts';
import { startTestStack } from '../testing/stack.ts';
import { openEmbeddedTestDatabase } from '../../shared/testing/embedded-template.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { applySiteRetention } from '../../shared/tenancy/retention.ts';
import { eraseSessions } from '../../api/routes/privacy/privacy.queries.ts';

/**
 * Issue 30 item 8: erasure end to end. Events are sent through ingest, stored by the processor, erased by session
 * id and by anonymous id; every read route and the CSV export stop showing them at once, and the processor's next
 * tick leaves scores, issues and elements equal to a recomputation from what remains.
 */
test('erasure by session id and by anonymous id: rows gone from every read, derived rows recomputed, owner/admin only, audited', async (t) => {
  const stack = await startTestStack();
  t.teardown(() => stack.stop());
  const api = apiClient(stack.baseUrl);
  const { tenant } = stack;
  const db = stack.infra.database.db;
  const sessions = Array.from({ length: 6 }, (_, i) => `erase-me-${i}-${crypto.randomUUID().slice(0, 8)}`);
  const now = Date.now() - 60_000;
  for (const [i, sessionId] of sessions.entries()) {
    const b = sdkBatch({ sessionId, events: 4, ts: now + i * 1000, sentAt: Date.now() });
    if (i === 1 || i === 2) (b.context as Record<string, unknown>).anonymous_id = 'visitor-42';
    t.is(
      (await postJson(`${stack.baseUrl}/v1/ingest`, b, { authorization: `Bearer ${tenant.publishableKey}` })).status,
      202,
    );
  }
  const count = async (table: 'events' | 'signals' | 'sessions', ids = sessions) =>
    (
      await sql<{
        n: number;
      }>`select count(*)::int as n from ${sql.table(table)} where site_id = ${tenant.siteId} and ${sql.ref(table === 'sessions' ? 'id' : 'session_id')} = any(${ids})`.execute(
        db,
      )
    ).rows[0].n;
  await eventually(async () => (await count('events')) === 24, { timeoutMs: 30_000 });
  const issueBefore = await eventually(
    async () =>
      (await db
        .selectFrom('ux_issues')
        .select(['id', 'affected_sessions', 'signal_count'])
        .where('site_id', '=', tenant.siteId)
        .executeTakeFirst()) ?? null,
    { timeoutMs: 30_000 },
  );
  t.is(issueBefore.affected_sessions, 6);

  const erased = [sessions[0]!, sessions[1]!, sessions[2]!];
  const auth = { token: tenant.owner.token };
  // Keys and members may not erase.
  t.is(
    (await api('DELETE', `/v1/manage/sessions/${sessions[0]}?site_id=${tenant.siteId}`, { token: tenant.secretKey }))
      .status,
    403,
  );
  const member = await stack.newUser(tenant, 'member');
  t.is(
    (await api('DELETE', `/v1/manage/sessions/${sessions[0]}?site_id=${tenant.siteId}`, { token: member.token }))
      .status,
    403,
  );
  const other = await stack.newTenant();
  t.is(
    (await api('DELETE', `/v1/manage/sessions/${sessions[0]}?site_id=${tenant.siteId}`, { token: other.owner.token }))
      .status,
    404,
  );

  const one = await api('DELETE', `/v1/manage/sessions/${sessions[0]}?site_id=${tenant.siteId}`, auth);
  t.is(one.status, 200, one.text);
  t.deepEqual(one.body.data, {
    site_id: tenant.siteId,
    erased: { sessions: 1, events: 4, signals: 3 },
    derived: 'pending',
  });
  const visitor = await api('DELETE', `/v1/manage/visitors/visitor-42?site_id=${tenant.siteId}`, auth);
  t.deepEqual(visitor.body.data.erased, { sessions: 2, events: 8, signals: 6 });
  const again = await api('DELETE', `/v1/manage/sessions/${sessions[0]}?site_id=${tenant.siteId}`, auth);
  t.deepEqual(again.body.data.erased, { sessions: 0, events: 0, signals: 0 }, 'nothing left, same shape');

  // Every read at once.
  for (const table of ['events', 'signals', 'sessions'] as const) t.is(await count(table, erased), 0, table);
  for (const s of erased)
    t.is(
      (await api('GET', `/v1/query/session?site_id=${tenant.siteId}&session_id=${s}`, { token: tenant.secretKey }))
        .status,
      404,
    );
  for (const table of ['events', 'signals', 'sessions']) {
    const raw = await api('GET', `/v1/query/raw?site_id=${tenant.siteId}&table=${table}&limit=500`, {
      token: tenant.secretKey,
    });
    t.is(raw.status, 200);
    t.false(
      erased.some((s) => raw.text.includes(s)),
      `raw ${table}`,
    );
  }
  const csv = await fetch(`${stack.baseUrl}/v1/query/export/events.csv?site_id=${tenant.siteId}`, {
    headers: { authorization: `Bearer ${tenant.secretKey}` },
  });
  const csvText = await csv.text();
  t.true(csvText.includes(sessions[3]!), 'the export still has what remains');
  t.false(
    erased.some((s) => csvText.includes(s)),
    'and none of what was erased',
  );
  const evidence = await db
    .selectFrom('ux_issues')
    .select('evidence')
    .where('id', '=', issueBefore.id)
    .executeTakeFirstOrThrow();
  t.false(
    erased.some((s) => JSON.stringify(evidence.evidence).includes(s)),
    'issue evidence no longer names them',
  );

  // The processor's next tick rebuilds the site's state: derived rows equal a recomputation from what remains.
  await stack.tick();
  const pending = await db
    .selectFrom('privacy_erasures')
    .select('id')
    .where('site_id', '=', tenant.siteId)
    .where('applied_at', 'is', null)
    .execute();
  t.is(pending.length, 0, 'applied');
  const issueAfter = await db
    .selectFrom('ux_issues')
    .select(['affected_sessions', 'signal_count'])
    .where('id', '=', issueBefore.id)
    .executeTakeFirstOrThrow();
  t.deepEqual(issueAfter, { affected_sessions: 3, signal_count: issueBefore.signal_count - 9 });
  const score = await sql<{
    sessions: number;
  }>`select sessions from page_scores where site_id = ${tenant.siteId} and page = '/checkout' order by window_start desc limit 1`.execute(
    db,
  );
  t.is(score.rows[0]?.sessions, 3);
  const report = await recomputeSiteCommand(db, tenant.siteId, Date.now(), false, createLogger('silent'));
  t.deepEqual([report.pages.differing, report.issues.differing, report.elements.differing], [[], [], []]);
  // A new batch after the erasure counts on the rebuilt windows, not the erased ones.
  t.is(
    (
      await postJson(`${stack.baseUrl}/v1/ingest`, sdkBatch({ events: 4 }), {
        authorization: `Bearer ${tenant.publishableKey}`,
      })
    ).status,
    202,
  );
  await eventually(
    async () =>
      (
        await db
          .selectFrom('ux_issues')
          .select('affected_sessions')
          .where('id', '=', issueBefore.id)
          .executeTakeFirstOrThrow()
      ).affected_sessions === 4,
    { timeoutMs: 30_000 },
  );

  const audit = await api('GET', `/v1/query/audit?org_id=${tenant.orgId}&action=privacy.erase`, auth);
  t.is(audit.body.data.entries.length, 3);
  t.false(
    audit.text.includes('visitor-42') || erased.some((s) => audit.text.includes(s)),
    'the audit log does not keep the erased ids',
  );
});

test("per-site retention: 31 to 90 days, owner/admin; the processor's tick deletes the site's older events, signals and sessions, other sites keep theirs", async (t) => {
  const stack = await startTestStack();
  t.teardown(() => stack.stop());
  const api = apiClient(stack.baseUrl);
  const db = stack.infra.database.db;
  const short = stack.tenant;
  const other = await stack.newTenant();
  const patch = (days: unknown, token = short.owner.token) =>
    api('PATCH', `/v1/manage/site/${short.siteId}`, { token, body: { retention_days: days } });
  for (const bad of [30, 91, 45.5, '40']) {
    const r = await patch(bad);
    t.is(r.status, 400, String(bad));
    t.is(r.body.error.details[0].path, 'retention_days');
  }
  t.is((await patch(40, (await stack.newUser(short, 'member')).token)).status, 403);
  const ok = await patch(40);
  t.is(ok.status, 200, ok.text);
  t.is(ok.body.data.retention_days, 40);
  const day = 86_400_000;
  for (const site of [short.siteId, other.siteId]) {
    for (const [sessionId, ageDays] of [
      ['old', 45],
      ['recent', 35],
    ] as const) {
      const at = new Date(Date.now() - ageDays * day);
      await sql`insert into events (site_id, id, ts, received_at, session_id, type, page, device) values (${site}, ${crypto.randomUUID()}, ${at}, ${at}, ${sessionId}, 'page_view', '/old', 'desktop')`.execute(
        db,
      );
      await sql`insert into signals (site_id, event_id, ts, session_id, page, signal_type, device) values (${site}, ${crypto.randomUUID()}, ${at}, ${sessionId}, '/old', 'rage_click', 'desktop')`.execute(
        db,
      );
      await sql`insert into sessions (site_id, id, started_at, last_seen_at, device, first_page, last_page) values (${site}, ${sessionId}, ${at}, ${at}, 'desktop', '/old', '/old')`.execute(
        db,
      );
    }
  }
  await stack.tick();
  const left = async (site: string) => {
    const r = await sql<{ t: string; s: string }>`
      select 'events' as t, session_id as s from events where site_id = ${site} and page = '/old'
      union all select 'signals', session_id from signals where site_id = ${site} and page = '/old'
      union all select 'sessions', id from sessions where site_id = ${site} and first_page = '/old'`.execute(db);
    return r.rows.map((x) => `${x.t}:${x.s}`).sort();
  };
  t.deepEqual(await left(short.siteId), ['events:recent', 'sessions:recent', 'signals:recent']);
  t.deepEqual(
    await left(other.siteId),
    ['events:old', 'events:recent', 'sessions:old', 'sessions:recent', 'signals:old', 'signals:recent'],
    'the instance default (90 days) elsewhere',
  );
  t.is((await patch(null)).body.data.retention_days, null, 'back to the instance default');
});

// `events` and `signals` are compressed after 35 days where TimescaleDB runs its policies (migration 0001), and a site may
// keep up to 90: an erasure or a site's retention must reach rows in compressed chunks as well as in plain ones.
test('embedded: erasure and retention reach events and signals in compressed TimescaleDB chunks', async (t) => {
  const handle = await openEmbeddedTestDatabase();
  t.teardown(() => handle.close());
  const { db } = handle;
  const orgId = await insertOrg(db, { name: 'compressed' });
  const { siteId } = await provisionSite(db, { orgId, name: 'compressed', url: 'https://compressed.example' });
  const at = (daysAgo: number, i: number) => new Date(Date.now() - daysAgo * 86_400_000 + i * 1000);
  for (const [session, daysAgo] of [
    ['erased', 50],
    ['kept', 50],
    ['expired', 80],
  ] as const)
    for (let i = 0; i < 3; i++) {
      const id = crypto.randomUUID();
      await sql`insert into events (site_id, id, ts, received_at, session_id, type, page, signal, device)
        values (${siteId}, ${id}, ${at(daysAgo, i)}, now(), ${session}, 'signal', '/', 'rage_click', 'desktop')`.execute(
        db,
      );
      await sql`insert into signals (site_id, event_id, ts, session_id, page, signal_type, device)
        values (${siteId}, ${id}, ${at(daysAgo, i)}, ${session}, '/', 'rage_click', 'desktop')`.execute(db);
    }
  for (const table of ['events', 'signals'])
    for (const { c } of (await sql<{ c: string }>`select show_chunks(${table}::regclass)::text as c`.execute(db)).rows)
      await sql`select compress_chunk(${c}::regclass)`.execute(db);
  const uncompressed = await sql<{ n: number }>`
    select count(*)::int as n from timescaledb_information.chunks
    where hypertable_name in ('events', 'signals') and not is_compressed`.execute(db);
  t.is(uncompressed.rows[0].n, 0, 'every chunk holding the rows is compressed');
  const left = async (table: 'events' | 'signals') =>
    (
      await sql<{ session_id: string; n: number }>`select session_id, count(*)::int as n from ${sql.table(table)}
        where site_id = ${siteId} group by session_id order by session_id`.execute(db)
    ).rows;

  const erased = await db.transaction().execute((trx) => eraseSessions(trx, siteId, ['erased']));
  t.like(erased, { events: 3, signals: 3 });
  for (const table of ['events', 'signals'] as const)
    t.deepEqual(
      await left(table),
      [
        { session_id: 'expired', n: 3 },
        { session_id: 'kept', n: 3 },
      ],
      `${table} after the erasure`,
    );

  await db.updateTable('sites').set({ retention_days: 60 }).where('id', '=', siteId).execute();
  await applySiteRetention(db, [siteId], new Date());
  for (const table of ['events', 'signals'] as const)
    t.deepEqual(await left(table), [{ session_id: 'kept', n: 3 }], `${table} after a 60-day retention`);
});
