import test from 'ava';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { sql } from 'kysely';
import type { EventBatchMessage, StreamEvent } from '../shared/contracts/ingest.ts';
import type { RunBulkTransaction } from '../shared/db/bulk.ts';
import { useTestDatabase } from '../shared/testing/database.ts';
import { createLogger } from '../shared/logger.ts';
import { recomputeSite } from './engine/recompute.ts';
import { HOUR_MS, clusterWindowStart } from './engine/time.ts';
import { FrictionEngineSink } from './engine-sink.ts';
import { InDoubtEvents, storeBatch } from './events.consumer.ts';
import { loadEngineRows } from './recompute-site.ts';

const handle = useTestDatabase(test, 'ackloss');

const NOW = Date.now();
const log = createLogger('silent');

/**
 * What one attempt at a fetch comes to: `ok` commits and acks; `ack-lost` commits but the ack never reaches the
 * stream, so the batches come again; `commit-lost` commits on the server but the client sees the connection drop
 * (memory is not told, the batches come again); `rollback` fails before the commit.
 */
type Outcome = 'ok' | 'ack-lost' | 'commit-lost' | 'rollback';

/** A pool of events (a few sessions, hot clusters), and batches that pick from it: events repeat across batches. */
const planArb = fc
  .array(
    fc.record({
      session: fc.integer({ min: 1, max: 4 }),
      type: fc.constantFrom<'page_view' | 'signal'>('page_view', 'signal', 'signal'),
      page: fc.constantFrom('/a', '/b'),
      signal: fc.constantFrom('rage_click', 'dead_click'),
      selector: fc.constantFrom('#pay', '#buy'),
      ago: fc.integer({ min: 0, max: 20 * HOUR_MS }),
      id: fc.uuid({ version: 4 }),
    }),
    { minLength: 1, maxLength: 40 },
  )
  .chain((pool) =>
    fc.record({
      pool: fc.constant(pool),
      batches: fc.array(fc.array(fc.nat({ max: pool.length - 1 }), { minLength: 1, maxLength: 8 }), {
        minLength: 1,
        maxLength: 8,
      }),
      // Each step fetches up to `take` pending batches (from `at` on) and ends as `outcome`.
      steps: fc.array(
        fc.record({
          at: fc.nat(),
          take: fc.integer({ min: 1, max: 4 }),
          outcome: fc.constantFrom<Outcome>('ok', 'ack-lost', 'ack-lost', 'commit-lost', 'commit-lost', 'rollback'),
        }),
        { maxLength: 25 },
      ),
    }),
  );

class Injected extends Error {}

/** The processor's bulk transaction, with the fault of `outcome` injected around the real commit. */
function faulty(bulk: RunBulkTransaction, outcome: Outcome): RunBulkTransaction {
  if (outcome === 'rollback') {
    return (fn) =>
      bulk(async (tx) => {
        await fn(tx);
        throw new Injected('connection reset before commit');
      });
  }
  if (outcome === 'commit-lost') {
    return async (fn) => {
      await bulk(fn);
      throw new Injected('connection reset while reading the commit reply');
    };
  }
  return bulk;
}

test('property: after commits whose ack or reply was lost, redelivered any number of times among other batches, memory equals a recomputation from the database', async (t) => {
  t.timeout(180_000);
  let lostCommits = 0;
  await fc.assert(
    fc.asyncProperty(planArb, async ({ pool, batches, steps }) => {
      const db = handle.db;
      const orgId = randomUUID();
      const siteId = randomUUID();
      await db.insertInto('orgs').values({ id: orgId, name: 'o' }).execute();
      await db.insertInto('sites').values({ id: siteId, org_id: orgId, name: 's', url: 'https://s.test' }).execute();
      const messages: EventBatchMessage[] = batches.map((picks) => {
        // One session per batch, as the SDK sends: the events of the first pick's session.
        const session = pool[picks[0]].session;
        const events: StreamEvent[] = picks
          .map((i) => pool[i])
          .filter((e) => e.session === session)
          .map((e) => ({
            id: e.id,
            type: e.type,
            ts: NOW - e.ago,
            page: e.page,
            ...(e.type === 'signal' ? { signal: e.signal, selector: e.selector, label: 'Pay' } : {}),
          }));
        return {
          v: 1,
          batch_id: randomUUID(),
          org_id: orgId,
          site_id: siteId,
          received_at: NOW,
          session_id: `s${session}`,
          context: { device: 'desktop', viewport: { w: 1280, h: 800 } },
          events,
        };
      });
      const sink = new FrictionEngineSink({ log, now: () => NOW });
      const doubts = new InDoubtEvents();
      const attempt = async (fetched: EventBatchMessage[], outcome: Outcome) => {
        try {
          await storeBatch(faulty(handle.bulk, outcome), sink, fetched, doubts);
          return true;
        } catch (err) {
          if (!(err instanceof Injected)) throw err;
          return false;
        }
      };
      // Pending = not acked: what the stream delivers (again). Acked batches leave it.
      let pending = messages.map((_, i) => i);
      for (const s of steps) {
        if (pending.length === 0) break;
        const start = s.at % pending.length;
        const fetched = [...pending.slice(start), ...pending.slice(0, start)].slice(0, s.take);
        if (s.outcome === 'commit-lost') lostCommits++;
        const committed = await attempt(
          fetched.map((i) => messages[i]),
          s.outcome,
        );
        if (committed && s.outcome === 'ok') pending = pending.filter((i) => !fetched.includes(i));
      }
      // Then every remaining batch is delivered until acked (one at a time, in order).
      for (const i of pending) t.true(await attempt([messages[i]], 'ok'));

      const distinct = new Set(messages.flatMap((m) => m.events.map((e) => e.id))).size;
      const stored = await sql<{ n: number; sessions: number }>`
        select (select count(*)::int from events where site_id = ${siteId}) as n,
               (select coalesce(sum(event_count), 0)::int from sessions where site_id = ${siteId}) as sessions`.execute(
        db,
      );
      if (stored.rows[0].n !== distinct || stored.rows[0].sessions !== distinct)
        throw new Error(`stored ${JSON.stringify(stored.rows[0])}, expected ${distinct} events counted once`);
      const recomputed = recomputeSite(await loadEngineRows(db, siteId, clusterWindowStart(NOW)), siteId, NOW);
      const memory = sink.snapshot(siteId, NOW);
      if (!isDeepStrictEqual(memory, recomputed)) {
        throw new Error(
          `memory ≠ recomputation\nmemory:     ${JSON.stringify(memory)}\nrecomputed: ${JSON.stringify(recomputed)}`,
        );
      }
      if (doubts.size !== 0) throw new Error(`${doubts.size} events still in doubt after every batch was acked`);
    }),
    // A passing run takes ~10 s; the cap bounds shrinking after a failure (which still fails the test).
    { numRuns: 60, interruptAfterTimeLimit: 60_000, markInterruptAsFailure: true, includeErrorInReport: true },
  );
  t.true(lostCommits > 20, `runs must lose commits (${lostCommits})`);
});

test('a failed fetch larger than the in-doubt bound is remembered whole: every event of a lost commit is folded when the fetch comes back', async (t) => {
  const db = handle.db;
  const orgId = randomUUID();
  const siteId = randomUUID();
  await db.insertInto('orgs').values({ id: orgId, name: 'o' }).execute();
  await db.insertInto('sites').values({ id: siteId, org_id: orgId, name: 's', url: 'https://s.test' }).execute();
  // 40 events in one fetch, against a memory bounded at 10 (in production: 200,000 against a fetch of up to 1.5 M).
  const fetched: EventBatchMessage[] = [0, 1, 2, 3].map((b) => ({
    v: 1,
    batch_id: randomUUID(),
    org_id: orgId,
    site_id: siteId,
    received_at: NOW,
    session_id: `big-${b}`,
    context: { device: 'desktop', viewport: { w: 1280, h: 800 } },
    events: Array.from(
      { length: 10 },
      (_, i): StreamEvent => ({
        id: randomUUID(),
        type: 'signal',
        ts: NOW - i * 1000,
        page: '/a',
        signal: 'rage_click',
        selector: '#pay',
        label: 'Pay',
      }),
    ),
  }));
  const folded: string[] = [];
  const sink = {
    stage: async (_trx: unknown, fresh: readonly { id: string }[]) => () => void folded.push(...fresh.map((e) => e.id)),
  };
  const doubts = new InDoubtEvents(10);
  // The commit happens, its reply is lost: nothing is folded, all 40 are in doubt.
  await t.throwsAsync(storeBatch(faulty(handle.bulk, 'commit-lost'), sink as never, fetched, doubts), {
    instanceOf: Injected,
  });
  t.deepEqual(folded, []);
  t.is(doubts.size, 40);
  // The fetch comes back: its events are already stored, and every one of them is folded now, once.
  await storeBatch(handle.bulk, sink as never, fetched, doubts);
  t.is(new Set(folded).size, 40);
  t.is(folded.length, 40);
  t.is(doubts.size, 0);
});
