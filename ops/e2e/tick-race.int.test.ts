import test from 'ava';
import { sql } from 'kysely';
import { startTestStack } from '../testing/stack.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { postJson } from '../../shared/testing/http-client.ts';
import { apiClient } from '../../shared/testing/http-client.ts';
import { recomputeSiteCommand } from '../../processor/recompute-site.ts';
import { createLogger } from '../../shared/logger.ts';

test('PATCHes and batches racing ticks never lose a status, and what is stored equals a recomputation afterwards', async (t) => {
  const stack = await startTestStack();
  t.teardown(() => stack.stop());
  const db = stack.infra.database.db;
  const auth = { authorization: `Bearer ${stack.tenant.publishableKey}` };
  const api = apiClient(stack.baseUrl);
  let sent = 0;
  const send = async (i: number) => {
    const r = await postJson(
      `${stack.baseUrl}/v1/ingest`,
      sdkBatch({ events: 4, sessionId: `s-${i}`, page: '/checkout', selector: '#pay' }),
      auth,
    );
    t.is(r.status, 202);
    sent += r.body.data.accepted;
  };
  for (let i = 0; i < 8; i++) await send(i);
  const issueId = await eventually(
    async () =>
      (
        await sql<{
          id: string;
        }>`select id from ux_issues where site_id = ${stack.tenant.siteId} and cluster_selector = '#pay'`.execute(db)
      ).rows[0]?.id,
    { timeoutMs: 30_000 },
  );

  const statuses = ['triaged', 'in_progress', 'ignored', 'triaged', 'in_progress'] as const;
  let last = '';
  for (let round = 0; round < 15; round++) {
    const status = statuses[round % statuses.length];
    const [patch] = await Promise.all([
      api('PATCH', `/v1/manage/issues/${issueId}`, { token: stack.tenant.owner.token, body: { status } }),
      send(100 + round),
      stack.tick(),
      stack.tick(),
    ]);
    t.is(patch.status, 200, patch.text);
    last = status;
  }
  await eventually(
    async () =>
      (
        await sql<{ n: number }>`select count(*)::int as n from events where site_id = ${stack.tenant.siteId}`.execute(
          db,
        )
      ).rows[0].n === sent,
    { timeoutMs: 30_000 },
  );
  await stack.tick();
  const stored = await sql<{ status: string }>`select status from ux_issues where id = ${issueId}`.execute(db);
  t.is(stored.rows[0].status, last, 'the last PATCH stands');
  const report = await recomputeSiteCommand(db, stack.tenant.siteId, Date.now(), false, createLogger('silent'));
  t.deepEqual([report.pages.differing, report.issues.differing, report.elements.differing], [[], [], []]);
});
