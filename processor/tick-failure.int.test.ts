import test from 'ava';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { EventBatchMessage, StreamEvent } from '../shared/contracts/ingest.ts';
import { useTestDatabase } from '../shared/testing/database.ts';
import { uniqueTestId } from '../shared/testing/services.ts';
import { createLogger } from '../shared/logger.ts';
import { recomputeSite } from './engine/recompute.ts';
import { DAY_MS, HOUR_MS, bucketStart, clusterWindowStart } from './engine/time.ts';
import { FrictionEngineSink } from './engine-sink.ts';
import { InDoubtEvents, storeBatch } from './events.consumer.ts';
import { loadEngineRows, recomputeSiteCommand } from './recompute-site.ts';
import { TickGate } from './tick-gate.ts';

const handle = useTestDatabase(test, 'tickfail');

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

test.serial(
  'a tick whose transaction fails at commit changes nothing, in the database or in memory; the next tick does all its work',
  async (t) => {
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
  },
);

/** Polls `fn` until it is true (a condition, not a fixed time); fails after `ms`. */
async function until(fn: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Statements of this test database waiting on a lock (the file's tests run one at a time). */
async function lockWaiters(db: typeof handle.db): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*)::int as n from pg_stat_activity
    where datname = current_database() and wait_event_type = 'Lock'`.execute(db);
  return rows[0].n;
}

test.serial(
  'forced race: a tick that evicts a cluster and writes its issue while a PATCH of it commits never writes over a batch it did not see (the gate; without it the page score it computed lands stale)',
  async (t) => {
    const db = handle.db;
    const T = bucketStart(Date.now(), DAY_MS) + 12 * HOUR_MS;
    const later = T + DAY_MS; // the cluster window's first day leaves it
    let clock = T;
    const { orgId, siteId } = await newSite();
    const sink = new FrictionEngineSink({ log, now: () => clock });
    const gate = new TickGate();
    const doubts = new InDoubtEvents();
    const tick = (onEnter = () => {}) =>
      gate.exclusive(async () => {
        onEnter();
        await sink.tick(db, [siteId], TRIAGE_HOUR, log);
      });
    const batch = (session: string, ts: number, kinds: ('view' | 'signals')[]): EventBatchMessage => ({
      v: 1,
      batch_id: randomUUID(),
      org_id: orgId,
      site_id: siteId,
      received_at: clock,
      session_id: session,
      context: { device: 'desktop', viewport: { w: 1280, h: 800 } },
      events: kinds.flatMap((k): StreamEvent[] =>
        k === 'view'
          ? [{ id: randomUUID(), type: 'page_view' as const, page: '/checkout', ts }]
          : [1, 2].map((i) => ({
              id: randomUUID(),
              type: 'signal' as const,
              signal: 'rage_click',
              selector: '#pay',
              label: 'Pay',
              page: '/checkout',
              ts: ts + i,
            })),
      ),
    });
    // An issue from three sessions on the cluster window's first day (evicted at `later`) and two on its second.
    const firstDay = clusterWindowStart(T) + HOUR_MS;
    await storeBatch(
      handle.bulk,
      sink,
      [
        ...['a', 'b', 'c'].map((s) => batch(`old-${s}`, firstDay, ['signals'])),
        ...['d', 'e'].map((s) => batch(`mid-${s}`, firstDay + DAY_MS, ['signals'])),
      ],
      doubts,
    );
    await tick();
    const issue = () =>
      db
        .selectFrom('ux_issues')
        .select(['id', 'signal_count', 'affected_sessions', 'status'])
        .where('site_id', '=', siteId)
        .where('cluster_selector', '=', '#pay')
        .executeTakeFirstOrThrow();
    const { id: issueId } = await issue();
    t.like(await issue(), { signal_count: 10, affected_sessions: 5 });

    clock = later;
    // A recent view: the page is in the score window at `later`, so the tick rescores it from memory.
    await storeBatch(handle.bulk, sink, [batch('recent', later - 2 * HOUR_MS, ['view'])], doubts);
    // A person's PATCH, as the route writes it: its own transaction, the issue row locked and changed, held open.
    let commit!: () => void;
    const held = new Promise<void>((r) => (commit = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const patch = db.transaction().execute(async (trx) => {
      await trx.selectFrom('ux_issues').select('id').where('id', '=', issueId).forUpdate().execute();
      await trx.updateTable('ux_issues').set({ status: 'in_progress' }).where('id', '=', issueId).execute();
      locked();
      await held;
    });
    await isLocked;
    // A batch with a new session on the page and the cluster holds the gate (shared): it has written the page's score
    // row and waits on the PATCH's lock to read the issue it updates.
    const fresh = gate.shared(() =>
      storeBatch(handle.bulk, sink, [batch('new', later - HOUR_MS, ['view', 'signals'])], doubts),
    );
    await until(async () => (await lockWaiters(db)) >= 1, 'the batch waits on the PATCH');
    // The tick is due. With the gate it waits for the batch and never enters. A tick let in beside the batch (no gate)
    // evicts the first day and computes the page's score from memory without the batch's session, then waits on the
    // batch's score row: wait until it stands there, so the PATCH's commit lets the batch commit and the tick's stale
    // rows land over it. Either way the interleaving is decided here, not by timing.
    let entered = false;
    const ticking = tick(() => (entered = true));
    if (entered) await until(async () => (await lockWaiters(db)) >= 2, 'the tick waits behind the batch');
    commit();
    await patch;
    await Promise.all([fresh, ticking]);

    // The second day (2 sessions × 2) and the batch's session (2): the first day left, nothing of the batch lost.
    t.like(
      await issue(),
      { signal_count: 6, affected_sessions: 3, status: 'in_progress' },
      'the PATCH and the batch stand',
    );
    const report = await recomputeSiteCommand(db, siteId, later, false, log);
    t.deepEqual(
      [report.pages.differing, report.issues.differing, report.elements.differing],
      [[], [], []],
      'no stale write landed',
    );
    t.deepEqual(
      sink.snapshot(siteId, later),
      recomputeSite(await loadEngineRows(db, siteId, clusterWindowStart(later)), siteId, later),
      'memory = recomputation',
    );
  },
);
