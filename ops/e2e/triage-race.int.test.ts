/**
 * Issue 31, item 6: the nightly triage never overwrites a status changed by a concurrent PATCH. The race is forced:
 * a PATCH's transaction (the route's own statements: the issue locked, its status set) is held open while the
 * triage runs, and commits only once the triage waits on it. Real PostgreSQL.
 */
import test from 'ava';
import { sql } from 'kysely';
import { startTestStack } from '../testing/stack.ts';
import { tenantFixtures } from '../testing/manage-fixtures.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { runSiteTriage } from '../../processor/issues/triage-job.ts';
import { updateIssueFields } from '../../api/routes/issues/issues.queries.ts';
import { lockSiteObject } from '../../api/http/site-object.queries.ts';

const DAY = 86_400_000;

test('a PATCH committing while the triage runs keeps its status: the triage plans on it instead of resolving over it', async (t) => {
  const stack = await startTestStack({ processor: false });
  t.teardown(() => stack.stop());
  const db = stack.infra.database.db;
  const id = await tenantFixtures(stack, stack.tenant).issueId();
  const now = Date.now();
  // Quiet for 8 days: the triage's plan for an open issue is to resolve it.
  await db
    .updateTable('ux_issues')
    .set({
      first_signal_at: new Date(now - 9 * DAY),
      last_signal_at: new Date(now - 8 * DAY),
      created_at: new Date(now - 9 * DAY),
    })
    .where('id', '=', id)
    .execute();

  let commit!: () => void;
  const held = new Promise<void>((r) => (commit = r));
  const patch = db.transaction().execute(async (trx) => {
    await lockSiteObject(trx, 'ux_issues', id);
    await updateIssueFields(trx, id, { status: 'in_progress' }, new Date(now));
    await held;
  });
  await eventually(
    async () =>
      (
        await sql<{
          n: number;
        }>`select count(*)::int as n from pg_locks where relation = 'ux_issues'::regclass and granted`.execute(db)
      ).rows[0].n > 0,
    { timeoutMs: 10_000 },
  );
  const triage = runSiteTriage(db, stack.tenant.siteId, now, () => ({
    pageSessions: () => 0,
    windowAffectedSessions: () => 0,
  }));
  // The triage is waiting on the PATCH's row lock (before the fix: it had read "open" and waited to write "resolved").
  await eventually(
    async () =>
      (
        await sql<{
          n: number;
        }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(
          db,
        )
      ).rows[0].n > 0,
    { timeoutMs: 10_000 },
  );
  commit();
  await patch;
  await triage;
  const row = await db.selectFrom('ux_issues').select(['status']).where('id', '=', id).executeTakeFirstOrThrow();
  t.is(row.status, 'in_progress', "the person's change stands");
  const resolves = await db
    .selectFrom('issue_updates')
    .select('kind')
    .where('issue_id', '=', id)
    .where('source', '=', 'triage')
    .where('kind', '=', 'resolve')
    .execute();
  t.deepEqual(resolves, [], 'no resolve recorded or announced');
});
