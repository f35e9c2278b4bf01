/**
 * Issue 31, item 5: one site's failing triage never stops the others' triage, nor the deploy looks and alert rules
 * that run after it in the same tick. Before, the exception ended the whole tick, at every tick. Real PostgreSQL.
 */
import test from 'ava';
import { sql } from 'kysely';
import { startTestStack } from '../testing/stack.ts';

test('a site whose triage fails is retried at the next tick; the other sites and the rest of the tick go on', async (t) => {
  const stack = await startTestStack({ env: { TRIAGE_HOUR_UTC: '0' } });
  t.teardown(() => stack.stop());
  const db = stack.infra.database.db;
  const failing = stack.tenant.siteId;
  const other = (await stack.newTenant()).siteId;
  await sql`delete from job_runs`.execute(db);
  await sql
    .raw(
      `create function fail_triage() returns trigger language plpgsql as $$ begin if new.scope = '${failing}' then raise exception 'injected triage failure'; end if; return new; end $$`,
    )
    .execute(db);
  await sql`create trigger fail_triage before insert on job_runs for each row execute function fail_triage()`.execute(
    db,
  );
  const triaged = async () =>
    (await db.selectFrom('job_runs').select('scope').where('job', '=', 'triage').execute()).map((r) => r.scope).sort();

  await stack.tick(); // rejected before: the failing site's exception ended the tick
  t.deepEqual(await triaged(), [other]);

  await sql`drop trigger fail_triage on job_runs`.execute(db);
  await stack.tick();
  t.deepEqual(await triaged(), [failing, other].sort(), 'the failed site is triaged at the next tick');
});
