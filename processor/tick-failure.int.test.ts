import test from 'ava';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { EventBatchMessage, StreamEvent } from '../shared/contracts/ingest.ts';
import { openDatabase, type DatabaseHandle } from '../shared/db/connection.ts';
import { createTestDatabase } from '../shared/testing/database.ts';
import { uniqueTestId } from '../shared/testing/services.ts';
import { createLogger } from '../shared/logger.ts';
import { recomputeSite } from './engine/recompute.ts';
import { DAY_MS, HOUR_MS, bucketStart, clusterWindowStart } from './engine/time.ts';
import { FrictionEngineSink } from './engine-sink.ts';
import { InDoubtEvents, storeBatch } from './events.consumer.ts';
import { loadEngineRows, recomputeSiteCommand } from './recompute-site.ts';
import { TickGate } from './tick-gate.ts';

let handle: DatabaseHandle;
let drop: () => Promise<void>;
test.before(async () => {
  const d = await createTestDatabase('tickfail');
  drop = d.drop;
  handle = await openDatabase({ url: d.url, dataDir: '' });
});
test.after.always(async () => {
  await handle?.close();
  await drop?.();
});

const log = createLogger('silent');
/** Never due in this test: the nightly triage is not what is tested here. */
const TRIAGE_HOUR = 23;

/** A fresh org and site for one test. */
async function newSite(): Promise<{ orgId: string; siteId: string }> {
  const orgId = randomUUID();
  const siteId = randomUUID();
  await handle.db.insertInto('orgs').values({ id: orgId, name: 'o' }).execute();
  await handle.db.insertInto('sites').values({ id: siteId, org_id: orgId, name: 's', url: 'https://s.test' }).execute();
  return { orgId, siteId };
}

test('a tick whose transaction fails at commit changes nothing, in the database or in memory; the next tick does all its work', async (t) => {
  const db = handle.db;
  const T = bucketStart(Date.now(), DAY_MS) + 12 * HOUR_MS;
  const later = T + DAY_MS; // the old page views leave the score window, the old signals the cluster window
  let clock = T;
  const { orgId, siteId } = await newSite();
  const sink = new FrictionEngineSink({ log, now: () => clock });
  const batch = (session: string, events: Omit<StreamEvent, 'id'>[]): EventBatchMessage => ({
    v: 1,
    batch_id: randomUUID(),
    org_id: orgId,
    site_id: siteId,
    received_at: T,
    session_id: session,
    context: { device: 'desktop', viewport: { w: 1280, h: 800 } },
    events: events.map((e) => ({ id: randomUUID(), ...e })),
  });
  const oldSignal = clusterWindowStart(T) + HOUR_MS;
  const batches = [
    // An issue whose every signal leaves the cluster window by `later`, and a page whose every view leaves the score window.
    ...['a', 'b', 'c'].map((s) =>
      batch(
        `old-${s}`,
        [0, 1].map((i) => ({
          type: 'signal' as const,
          signal: 'rage_click',
          selector: '#old',
          label: 'Old',
          page: '/gone',
          ts: oldSignal + i,
        })),
      ),
    ),
    ...['a', 'b'].map((s) => batch(`view-${s}`, [{ type: 'page_view', page: '/gone', ts: T - 23 * HOUR_MS }])),
    // And a page that stays.
    ...['a', 'b', 'c'].map((s) =>
      batch(`new-${s}`, [
        { type: 'page_view', page: '/stays', ts: T - HOUR_MS },
        { type: 'signal', signal: 'dead_click', selector: '#buy', label: 'Buy', page: '/stays', ts: T - HOUR_MS + 1 },
      ]),
    ),
  ];
  await storeBatch(handle.bulk, sink, batches, new InDoubtEvents());
  const oldIssue = () =>
    db
      .selectFrom('ux_issues')
      .select(['signal_count', 'affected_sessions', 'status'])
      .where('site_id', '=', siteId)
      .where('cluster_selector', '=', '#old')
      .executeTakeFirst();
  t.like(await oldIssue(), { signal_count: 6, affected_sessions: 3 }, 'the old cluster opened an issue');

  const stored = async () => {
    const q = (table: string) =>
      sql
        .raw(`select * from ${table} where site_id = '${siteId}' order by 1, 2, 3`)
        .execute(db)
        .then((r) => JSON.stringify(r.rows));
    return {
      scores: await q('page_scores'),
      issues: await q('ux_issues'),
      elements: await q('page_elements'),
      updates: await q('issue_updates i join ux_issues u on u.id = i.issue_id'),
    };
  };

  clock = later;
  const memoryBefore = sink.snapshot(siteId, later);
  const dbBefore = await stored();
  // A deferred constraint trigger fails the tick's transaction at COMMIT, after every statement of it ran. Only this
  // site's rows: the file's other tests write page scores at the same time.
  const fn = `fail_tick_${uniqueTestId()}`;
  await sql
    .raw(
      `create function ${fn}() returns trigger language plpgsql as $$ begin if new.site_id = '${siteId}' then raise exception 'injected tick commit failure'; end if; return null; end $$`,
    )
    .execute(db);
  await sql
    .raw(
      `create constraint trigger ${fn} after insert or update on page_scores deferrable initially deferred for each row execute function ${fn}()`,
    )
    .execute(db);
  await t.throwsAsync(sink.tick(db, [siteId], TRIAGE_HOUR, log), { message: /injected tick commit failure/ });
  await sql.raw(`drop trigger ${fn} on page_scores`).execute(db);

  t.deepEqual(await stored(), dbBefore, 'the failed tick wrote nothing');
  t.deepEqual(sink.snapshot(siteId, later), memoryBefore, 'memory reads as before');
  t.like(await oldIssue(), { signal_count: 6 }, 'the evicted cluster still owes its issue update');

  // The next tick writes what the failed one could not: the evicted cluster's issue, the emptied page's last row.
  await sink.tick(db, [siteId], TRIAGE_HOUR, log);
  t.like(await oldIssue(), { signal_count: 0, affected_sessions: 0 });
  const gone = await db
    .selectFrom('page_scores')
    .select(['sessions'])
    .where('site_id', '=', siteId)
    .where('page', '=', '/gone')
    .orderBy('window_start', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  t.is(gone.sessions, 0, 'the emptied page got its last, empty row');
  const report = await recomputeSiteCommand(db, siteId, later, false, log);
  t.deepEqual([report.pages.differing, report.issues.differing, report.elements.differing], [[], [], []]);
  t.deepEqual(
    sink.snapshot(siteId, later),
    recomputeSite(await loadEngineRows(db, siteId, clusterWindowStart(later)), siteId, later),
    'memory = recomputation',
  );
});

test('a tick that evicts while batches and PATCHes race it loses no status, and memory and the database equal a recomputation', async (t) => {
  const db = handle.db;
  const T = bucketStart(Date.now(), DAY_MS) + 12 * HOUR_MS;
  let clock = T;
  const { orgId, siteId } = await newSite();
  const sink = new FrictionEngineSink({ log, now: () => clock });
  const gate = new TickGate();
  const doubts = new InDoubtEvents();
  let n = 0;
  const batch = (at: number): EventBatchMessage => ({
    v: 1,
    batch_id: randomUUID(),
    org_id: orgId,
    site_id: siteId,
    received_at: at,
    session_id: `s-${n++}`,
    context: { device: 'desktop', viewport: { w: 1280, h: 800 } },
    events: [
      { id: randomUUID(), type: 'page_view', page: '/stays', ts: at - 1000 },
      {
        id: randomUUID(),
        type: 'signal',
        signal: 'dead_click',
        selector: '#buy',
        label: 'Buy',
        page: '/stays',
        ts: at - 999,
      },
      {
        id: randomUUID(),
        type: 'signal',
        signal: 'dead_click',
        selector: '#buy',
        label: 'Buy',
        page: '/stays',
        ts: at - 998,
      },
    ],
  });
  // Hours of traffic, so every later tick evicts some of it from the score window.
  for (let h = 30; h >= 1; h--) await storeBatch(handle.bulk, sink, [batch(T - h * HOUR_MS)], doubts);
  const issueId = (
    await db
      .selectFrom('ux_issues')
      .select('id')
      .where('site_id', '=', siteId)
      .where('cluster_selector', '=', '#buy')
      .executeTakeFirstOrThrow()
  ).id;

  const statuses = ['triaged', 'in_progress', 'ignored', 'triaged', 'in_progress', 'ignored'] as const;
  for (const [round, status] of statuses.entries()) {
    clock = T + (round + 1) * HOUR_MS; // each tick has hours to evict
    const now = clock;
    await Promise.all([
      gate.shared(() => storeBatch(handle.bulk, sink, [batch(now)], doubts)),
      gate.exclusive(() => sink.tick(db, [siteId], TRIAGE_HOUR, log)),
      // A person's PATCH, as the route writes it: its own transaction, the row locked.
      db.transaction().execute(async (trx) => {
        await trx.selectFrom('ux_issues').select('id').where('id', '=', issueId).forUpdate().execute();
        await trx.updateTable('ux_issues').set({ status }).where('id', '=', issueId).execute();
      }),
      gate.shared(() => storeBatch(handle.bulk, sink, [batch(now - 5)], doubts)),
    ]);
  }
  await gate.exclusive(() => sink.tick(db, [siteId], TRIAGE_HOUR, log));
  t.is(
    (await db.selectFrom('ux_issues').select('status').where('id', '=', issueId).executeTakeFirstOrThrow()).status,
    'ignored',
    'the last PATCH stands',
  );
  const report = await recomputeSiteCommand(db, siteId, clock, false, log);
  t.deepEqual([report.pages.differing, report.issues.differing, report.elements.differing], [[], [], []]);
  t.deepEqual(
    sink.snapshot(siteId, clock),
    recomputeSite(await loadEngineRows(db, siteId, clusterWindowStart(clock)), siteId, clock),
    'memory = recomputation',
  );
});
