import test from 'ava';
import { sql } from 'kysely';
import { processorRole } from '../../processor/main.ts';
import { recomputeSiteCommand } from '../../processor/recompute-site.ts';
import type { RunBulkTransaction } from '../../shared/db/bulk.ts';
import { createLogger } from '../../shared/logger.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { postJson } from '../../shared/testing/http-client.ts';
import { startTestStack } from '../testing/stack.ts';

test('a batch whose commit reply was lost is retried on NATS and PostgreSQL, and what follows is scored from memory that holds it', async (t) => {
  const stack = await startTestStack({ processor: false });
  // The processor's bulk transactions, with the reply of the next `lose` commits lost: committed on the server,
  // a dropped connection for the processor (which retries the same messages, not acked yet).
  const real: RunBulkTransaction = stack.infra.database.bulk;
  let lose = 0;
  stack.infra.database.bulk = async (fn) => {
    const out = await real(fn);
    if (lose > 0) {
      lose--;
      throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
    }
    return out;
  };
  const processor = await processorRole(stack.infra).start();
  t.teardown(async () => {
    await processor.running.stop();
    await stack.stop();
  });
  const db = stack.infra.database.db;
  const site = stack.tenant.siteId;
  const auth = { authorization: `Bearer ${stack.tenant.publishableKey}` };
  const stored = async () =>
    (await sql<{ n: number }>`select count(*)::int as n from events where site_id = ${site}`.execute(db)).rows[0].n;

  lose = 1;
  t.is((await postJson(`${stack.baseUrl}/v1/ingest`, sdkBatch({ events: 4, sessionId: 's-1' }), auth)).status, 202);
  await eventually(async () => (await stored()) === 4 && lose === 0, { timeoutMs: 30_000, stepMs: 50 });
  // Two more sessions on the same page and element: their transaction scores the page and decides the issue from
  // memory plus the batch. Without the lost commit's events in memory, the page counts 2 sessions and no issue opens.
  for (const s of ['s-2', 's-3'])
    t.is((await postJson(`${stack.baseUrl}/v1/ingest`, sdkBatch({ events: 4, sessionId: s }), auth)).status, 202);
  await eventually(async () => (await stored()) === 12, { timeoutMs: 30_000, stepMs: 50 });
  // A batch scores with a site mean up to a minute old; the tick rescores every page from memory with today's.
  await processor.running.tick!();
  const report = await recomputeSiteCommand(db, site, Date.now(), false, createLogger('silent'));
  t.deepEqual([report.pages.differing, report.issues.differing, report.elements.differing], [[], [], []]);
  t.is(report.issues.expected, 1, 'three sessions opened the issue');
});
