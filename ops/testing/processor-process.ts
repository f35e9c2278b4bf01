/** Test-only: the processor as its own OS process, so a test can SIGKILL it mid-stream. */
import type { ChildProcess } from 'node:child_process';
import type { ExecutionContext } from 'ava';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { eventually, GiveUp } from '../../shared/testing/eventually.ts';
import { kill as stop, spawnRole } from '../../shared/testing/processes.ts';
import { sdkBatch } from './sdk-batch.ts';
import type { TestStack } from './stack.ts';

export const spawnProcessor = (env: Record<string, string>): ChildProcess =>
  spawnRole(['ops/cli.ts', 'processor'], { ...env, PROCESSOR_BATCH_MESSAGES: '50' });

/** The environment a processor process needs to share `stack`'s database and stream, plus `extra`. */
export const processorEnv = (stack: TestStack, extra: Record<string, string>): Record<string, string> => ({
  DATABASE_URL: stack.databaseUrl!,
  NATS_URL: stack.config.NATS_URL!,
  STREAM_PREFIX: stack.config.STREAM_PREFIX,
  ...extra,
});

/** How many partitions each processor holds a lease on, by owner. */
export const leaseOwners = async (db: Kysely<Database>): Promise<{ owner: string; n: number }[]> =>
  (
    await sql<{
      owner: string;
      n: number;
    }>`select owner, count(*)::int as n from partition_leases group by owner order by owner`.execute(db)
  ).rows;

/** The site's stored events (`n`) and distinct event ids among them (`d`). */
export const storedEvents = async (db: Kysely<Database>, siteId: string): Promise<{ n: number; d: number }> =>
  (
    await sql<{
      n: number;
      d: number;
    }>`select count(*)::int as n, count(distinct id)::int as d from events where site_id = ${siteId}`.execute(db)
  ).rows[0]!;

/**
 * Sends rounds of `perRound` SDK batches (20 events each, 40 sessions over 7 pages) through `deliver` until `stop()`
 * resolves, a round at most every `roundEveryMs`; `accepted` holds the ids of the events ingest answered 202 for.
 * The pace keeps the backlog a killed processor leaves bounded: unpaced, a fast machine's sender outruns the
 * processor and the final drain outlasts the test's timeout.
 */
export function sendBatches(
  perRound: number,
  deliver: (batch: ReturnType<typeof sdkBatch>) => Promise<{ status: number }>,
  roundEveryMs = 100,
): { accepted: Set<string>; stop(): Promise<void> } {
  const accepted = new Set<string>();
  let sending = true;
  const sender = (async () => {
    let i = 0;
    while (sending) {
      const paced = new Promise((r) => setTimeout(r, roundEveryMs));
      const batches = Array.from({ length: perRound }, () =>
        sdkBatch({ events: 20, sessionId: `s-${i++ % 40}`, page: `/p${i % 7}` }),
      );
      const results = await Promise.all(batches.map(deliver));
      results.forEach((r, k) => {
        if (r.status === 202) for (const e of batches[k]!.events) accepted.add(e.id as string);
      });
      await paced;
    }
  })();
  return {
    accepted,
    stop: async () => {
      sending = false;
      await sender;
    },
  };
}

/** SIGKILLs `p` and resolves once it exited (at once if it already has). */
export const kill = (p: ChildProcess): Promise<void> => stop(p, 'SIGKILL');

/**
 * Waits until the site's stored events reach `accepted`, then checks each was stored once and counted once in the
 * session counters: what a processor crash or takeover must leave behind.
 */
export async function assertStoredExactlyOnce(
  t: ExecutionContext,
  db: Kysely<Database>,
  siteId: string,
  accepted: number,
): Promise<void> {
  // A loaded machine drains slowly after a crash (a restart, lease expiry, the rebuild): wait while the count still
  // rises, and fail only once it has stood still for a minute, naming how far it got.
  let last = { n: -1, d: -1 };
  let lastRise = Date.now();
  const final = await eventually(
    async () => {
      const s = await storedEvents(db, siteId);
      if (s.n !== last.n) lastRise = Date.now();
      last = s;
      if (s.n === accepted) return s;
      if (Date.now() - lastRise > 60_000)
        throw new GiveUp(new Error(`stored ${s.n} of ${accepted} accepted events, no progress for 60 s`));
      return undefined;
    },
    { timeoutMs: 600_000, stepMs: 200, what: `${accepted} stored events` },
  );
  t.is(final.n, accepted, 'stored = accepted');
  t.is(final.d, final.n, 'no event stored twice');
  const sessions = await sql<{
    total: number;
  }>`select coalesce(sum(event_count), 0)::int as total from sessions where site_id = ${siteId}`.execute(db);
  t.is(sessions.rows[0].total, accepted, 'session counters counted each event exactly once');
}
