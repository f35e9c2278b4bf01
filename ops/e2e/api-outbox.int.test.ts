import test from 'ava';
import { sql } from 'kysely';
import { startPrivateNats } from '../../shared/testing/nats-server.ts';
import { uniqueTestId } from '../../shared/testing/services.ts';
import { notifyLog } from '../testing/notify-log.ts';
import { apiClient } from '../../shared/testing/http-client.ts';
import { tenantFixtures } from '../testing/manage-fixtures.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { startTestStack, type TestStack } from '../testing/stack.ts';

/** An `issue.updated` notification as the relay publishes it on NOTIFY. */
interface IssueUpdated {
  issue: { id: string; status: string };
  changes: Record<string, { from: unknown; to: unknown }>;
  actor?: string;
}

const issueNotifications = (stack: TestStack) => notifyLog<IssueUpdated>(stack, 'issue.updated');

const statusOf = (c: IssueUpdated) => (c.changes as { status?: { to: string } }).status?.to;
const about = (id: string) => (c: IssueUpdated) => c.issue.id === id;

test.serial(
  'a PATCH whose transaction fails at commit publishes nothing; a committed one is consumed promptly, in order per issue',
  async (t) => {
    const stack = await startTestStack();
    t.teardown(() => stack.stop());
    const db = stack.infra.database.db;
    const fx = tenantFixtures(stack, stack.tenant);
    const api = apiClient(stack.baseUrl);
    const owner = stack.tenant.owner.token;
    const log = await issueNotifications(stack);
    const [failing, other] = [await fx.issueId(), await fx.issueId()];

    // A deferred constraint trigger fails the transaction at COMMIT, after every statement of the route ran (the
    // change was published there before the outbox).
    const fn = `fail_commit_${uniqueTestId()}`;
    await sql
      .raw(
        `create function ${fn}() returns trigger language plpgsql as $$ begin raise exception 'injected commit failure'; end $$`,
      )
      .execute(db);
    await sql
      .raw(
        `create constraint trigger ${fn} after update on ux_issues deferrable initially deferred for each row when (new.note = 'fail at commit') execute function ${fn}()`,
      )
      .execute(db);
    t.teardown(() =>
      sql
        .raw(`drop trigger if exists ${fn} on ux_issues`)
        .execute(db)
        .then(() => undefined),
    );
    const refused = await api('PATCH', `/v1/manage/issues/${failing}`, {
      token: owner,
      body: { status: 'triaged', note: 'fail at commit' },
    });
    t.is(refused.status, 500, refused.text);
    t.is(
      (await db.selectFrom('ux_issues').select('status').where('id', '=', failing).executeTakeFirstOrThrow()).status,
      'open',
      'nothing changed',
    );

    // Then committed changes, several per issue: each is consumed, in the order they were made.
    const statuses = ['triaged', 'in_progress', 'resolved', 'open', 'ignored'];
    for (const status of statuses) {
      for (const id of [other, failing])
        t.is((await api('PATCH', `/v1/manage/issues/${id}`, { token: owner, body: { status } })).status, 200);
    }
    const done = await eventually(
      async () => {
        const seen = await log.drain();
        return seen.filter(about(other)).length === statuses.length ? seen : undefined;
      },
      { timeoutMs: 20_000, stepMs: 20 },
    );
    const of = (id: string) => done.filter(about(id));
    t.deepEqual(of(other).map(statusOf), statuses);
    await eventually(async () => of(failing).length === statuses.length || (await log.drain(), false), {
      timeoutMs: 20_000,
      stepMs: 20,
    });
    t.deepEqual(
      of(failing).map(statusOf),
      statuses,
      'the failed change was never announced; the committed ones were, in order',
    );
    t.false(done.some((c) => (c.changes as { note?: { to: string } }).note?.to === 'fail at commit'));

    // One PATCH → its notification consumed: the API's broadcast wakes the relay (the relay's poll, 1 s, is the fallback).
    const t1 = performance.now();
    t.is(
      (await api('PATCH', `/v1/manage/issues/${other}`, { token: owner, body: { note: 'latency probe' } })).status,
      200,
    );
    await eventually(
      async () =>
        (await log.drain()).some(
          (c) => c.issue.id === other && (c.changes as { note?: { to: string } }).note?.to === 'latency probe',
        ),
      { timeoutMs: 20_000, stepMs: 5 },
    );
    const oneMs = performance.now() - t1;
    t.log(`PATCH → notification consumed: ${Math.round(oneMs)} ms`);
    t.true(oneMs < 3000, `${Math.round(oneMs)} ms`);
  },
);

test.serial(
  'a PATCH while NATS is down answers 200, and its issue.updated notification is published once NATS is back',
  async (t) => {
    const nats = await startPrivateNats();
    const stack = await startTestStack({ env: { NATS_URL: nats.url } });
    t.teardown(async () => {
      await stack.stop();
      await nats.dispose();
    });
    const fx = tenantFixtures(stack, stack.tenant);
    const api = apiClient(stack.baseUrl);
    const id = await fx.issueId();
    const log = await issueNotifications(stack);

    await nats.stop();
    const r = await api('PATCH', `/v1/manage/issues/${id}`, {
      token: stack.tenant.owner.token,
      body: { status: 'in_progress', note: 'while NATS was down' },
    });
    t.is(r.status, 200, r.text);
    t.is(r.body.data.status, 'in_progress');
    const pending = await stack.infra.database.db
      .selectFrom('outbox')
      .select(['published_at'])
      .where('subject_kind', '=', 'issue.updated')
      .where('aggregate', '=', `issue:${id}`)
      .execute();
    t.deepEqual(
      pending.map((p) => p.published_at),
      [null],
      'queued, not yet published',
    );

    await nats.start();
    const seen = await eventually(
      async () => {
        const all = await log.drain().catch(() => [] as IssueUpdated[]);
        const mine = all.filter(about(id));
        return mine.length > 0 ? mine : undefined;
      },
      { timeoutMs: 60_000, stepMs: 250 },
    );
    t.deepEqual(seen.map(statusOf), ['in_progress']);
  },
);
