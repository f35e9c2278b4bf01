import test, { type ExecutionContext } from 'ava';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { startTestStack, type TestStack } from '../testing/stack.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { postJson } from '../../shared/testing/http-client.ts';
import { createTestDatabase } from '../../shared/testing/database.ts';
import { loadConfig } from '../../shared/config.ts';
import { openInfra } from '../../shared/infra.ts';
import { createLogger } from '../../shared/logger.ts';
import { runFriction } from '../../shared/testing/processes.ts';

const count = async (db: Kysely<Database>, q: ReturnType<typeof sql<{ n: number }>>): Promise<number> =>
  (await q.execute(db)).rows[0].n;
const events = (s: TestStack) =>
  count(
    s.infra.database.db,
    sql<{ n: number }>`select count(*)::int as n from events where site_id = ${s.tenant.siteId}`,
  );
const deadLetters = (s: TestStack) =>
  count(s.infra.database.db, sql<{ n: number }>`select count(*)::int as n from dead_letters`);
const openPauses = (s: TestStack) =>
  count(
    s.infra.database.db,
    sql<{
      n: number;
    }>`select count(*)::int as n from degradation_events where kind = 'partition_paused' and recovered_at is null`,
  );

async function send(t: ExecutionContext, s: TestStack, batches: number): Promise<number> {
  let accepted = 0;
  for (let i = 0; i < batches; i++) {
    const r = await postJson(`${s.baseUrl}/v1/ingest`, sdkBatch({ sessionId: `s-${i}` }), {
      authorization: `Bearer ${s.tenant.publishableKey}`,
    });
    t.is(r.status, 202, JSON.stringify(r.body));
    accepted += r.body.data.accepted;
  }
  return accepted;
}

/** Watches for `ms` that nothing is dead-lettered (the old loop dead-lettered 50 of 50 within 1.5 s). */
async function noDeadLettersFor(t: ExecutionContext, s: TestStack, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    t.is(await deadLetters(s), 0, 'nothing dead-lettered while the schema is behind');
    await new Promise((r) => setTimeout(r, 200));
  }
}

for (const embedded of [false, true]) {
  test(`${embedded ? 'embedded' : 'real services'}: a processor whose schema is behind (undefined column) pauses and dead-letters nothing; it resumes when the column is back`, async (t) => {
    const s = await startTestStack({ embedded, env: { EVENT_PARTITIONS: '1' } });
    t.teardown(() => s.stop());
    const db = s.infra.database.db;
    await sql`alter table sessions rename column signal_count to signal_count_gone`.execute(db);
    const accepted = await send(t, s, 50);
    // The pause is reported (degradation event), or the old loop's dead letters appear: whichever comes first.
    await eventually(async () => (await openPauses(s)) > 0 || (await deadLetters(s)) > 0, { timeoutMs: 30_000 });
    t.is(await deadLetters(s), 0);
    t.is(await openPauses(s), 1, 'the pause is a degradation event');
    const reason = (
      await db
        .selectFrom('degradation_events')
        .select('message')
        .where('kind', '=', 'partition_paused')
        .executeTakeFirstOrThrow()
    ).message;
    t.regex(reason, /signal_count/);
    t.regex(reason, /friction migrate/);
    await noDeadLettersFor(t, s, 2000);
    t.is(await events(s), 0);

    await sql`alter table sessions rename column signal_count_gone to signal_count`.execute(db);
    await eventually(async () => (await events(s)) === accepted, { timeoutMs: 60_000, stepMs: 200 });
    await eventually(async () => (await openPauses(s)) === 0, { timeoutMs: 10_000 });
    t.is(await deadLetters(s), 0);
  });
}

test('real services: a fault every message meets alone dead-letters at most 3 before the breaker pauses the partition; `friction dead-letters replay` puts them back once', async (t) => {
  const s = await startTestStack({ env: { EVENT_PARTITIONS: '1', PROCESSOR_BATCH_MESSAGES: '5' } });
  t.teardown(() => s.stop());
  const db = s.infra.database.db;
  // A trigger that rejects every row with a plain exception (P0001): to the loop it looks like content.
  await sql`create function reject_all() returns trigger language plpgsql as $$ begin raise exception 'rejected by a faulty trigger'; end $$`.execute(
    db,
  );
  await sql`create trigger reject_all before insert on events for each row execute function reject_all()`.execute(db);
  const accepted = await send(t, s, 20);
  await eventually(async () => (await openPauses(s)) > 0, { timeoutMs: 30_000 });
  t.is(await deadLetters(s), 3, 'the breaker opened after 3 messages in a row failed alone');
  t.regex(
    (
      await db
        .selectFrom('degradation_events')
        .select('message')
        .where('kind', '=', 'partition_paused')
        .executeTakeFirstOrThrow()
    ).message,
    /circuit breaker/,
  );

  await sql`drop trigger reject_all on events`.execute(db);
  await eventually(async () => (await events(s)) === accepted - 3 * 2, { timeoutMs: 60_000, stepMs: 200 });
  await eventually(async () => (await openPauses(s)) === 0, { timeoutMs: 10_000 });
  t.is(await deadLetters(s), 3);

  const env = { DATABASE_URL: s.databaseUrl!, FRICTION_DATA_DIR: '/nonexistent-friction-test-dir' };
  const listed = await runFriction(['dead-letters', 'list'], env);
  t.is(listed.code, 0, listed.stderr);
  t.is(listed.stdout.trim().split('\n').length, 3);
  t.regex(listed.stdout, /rejected by a faulty trigger/);
  const replay = await runFriction(['dead-letters', 'replay', '--all', '--actor', 'ops@example.test'], env);
  t.is(replay.code, 0, replay.stderr);
  t.regex(replay.stdout, /replayed 3 dead letter/);
  await eventually(async () => (await events(s)) === accepted, { timeoutMs: 30_000, stepMs: 200 });

  // Idempotent: a second run replays nothing; naming a replayed id says when and by whom; an unknown id fails.
  t.regex((await runFriction(['dead-letters', 'replay', '--all'], env)).stdout, /nothing to replay/);
  const ids = await db.selectFrom('dead_letters').select(['id', 'replayed_by']).execute();
  t.deepEqual(
    ids.map((r) => r.replayed_by),
    ['ops@example.test', 'ops@example.test', 'ops@example.test'],
  );
  const again = await runFriction(['dead-letters', 'replay', '--id', String(ids[0].id)], env);
  t.is(again.code, 0);
  t.regex(again.stdout, /already replayed .* by ops@example\.test/);
  t.is((await runFriction(['dead-letters', 'replay', '--id', '999999'], env)).code, 1);
  t.regex((await runFriction(['dead-letters', 'list'], env)).stdout, /no dead letters waiting/);
  await new Promise((r) => setTimeout(r, 1500)); // a relay poll: a second publish would show as more rows
  t.is(await events(s), accepted, 'each event stored once');
});

test('a role refuses to start on a database behind its code, and says to run `friction migrate`', async (t) => {
  const d = await createTestDatabase('behind');
  t.teardown(() => d.drop());
  const last = await (async () => {
    const { openDatabase } = await import('../../shared/db/connection.ts');
    const h = await openDatabase({ url: d.url, dataDir: '' });
    try {
      const row = (await h.db
        .selectFrom('kysely_migration' as never)
        .select('name' as never)
        .orderBy('name' as never, 'desc')
        .executeTakeFirstOrThrow()) as { name: string };
      await sql`delete from kysely_migration where name = ${row.name}`.execute(h.db);
      return row.name;
    } finally {
      await h.close();
    }
  })();
  const config = loadConfig({}, { DATABASE_URL: d.url, LOG_LEVEL: 'silent', FRICTION_SECRET: 'x'.repeat(64) });
  const err = await t.throwsAsync(openInfra(config, createLogger('silent'), { migrate: false }));
  t.regex(err!.message, new RegExp(`1 migration not applied, from ${last}\\)`));
  t.regex(err!.message, /run `friction migrate`/i);

  const run = await runFriction(['processor'], {
    DATABASE_URL: d.url,
    NATS_URL: process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222',
    PORT: '0',
    HOST: '127.0.0.1',
    FRICTION_DATA_DIR: '/nonexistent-friction-test-dir',
  });
  t.is(run.code, 1);
  t.regex(
    run.stderr.split('\n')[0],
    /^friction: the database at .* is behind this version of Friction .*friction migrate/,
  );
});
