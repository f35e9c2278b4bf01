/** Test-only: the processor as its own OS process, so a test can SIGKILL it mid-stream. */
import type { ChildProcess } from 'node:child_process';
import type { ExecutionContext } from 'ava';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { eventually, GiveUp } from '../../shared/testing/eventually.ts';
import { kill as stop, spawnRole } from '../../shared/testing/processes.ts';

export const spawnProcessor = (env: Record<string, string>): ChildProcess =>
  spawnRole(['ops/cli.ts', 'processor'], { ...env, PROCESSOR_BATCH_MESSAGES: '50' });

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
  const stored = async () =>
    (
      await sql<{
        n: number;
        d: number;
      }>`select count(*)::int as n, count(distinct id)::int as d from events where site_id = ${siteId}`.execute(db)
    ).rows[0];
  // A loaded machine drains slowly after a crash (a restart, lease expiry, the rebuild): wait while the count still
  // rises, and fail only once it has stood still for a minute, naming how far it got.
  let last = { n: -1, d: -1 };
  let lastRise = Date.now();
  const final = await eventually(
    async () => {
      const s = await stored();
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
