import test from 'ava';
import * as processor from '../testing/processor-process.ts';
import { sql } from 'kysely';
import { startTestStack } from '../testing/stack.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { postJson } from '../../shared/testing/http-client.ts';

test('the processor SIGKILLed mid-stream several times and restarted stores exactly what was accepted', async (t) => {
  const stack = await startTestStack({ processor: false });
  const env = processor.processorEnv(stack, {
    EVENT_PARTITIONS: String(stack.config.EVENT_PARTITIONS),
    // What a killed processor had fetched comes back after the ack wait: keep the test short.
    PROCESSOR_ACK_WAIT_MS: '3000',
    // A killed processor's partition leases expire before its successor takes them: keep that short too.
    PROCESSOR_LEASE_TTL_MS: '2000',
  });
  let proc = processor.spawnProcessor(env);
  t.teardown(async () => {
    await processor.kill(proc);
    await stack.stop();
  });
  const db = stack.infra.database.db;
  const stored = () => processor.storedEvents(db, stack.tenant.siteId);

  // Accepted = the event ids of every batch ingest answered 202 for. A request a busy machine dropped ("fetch
  // failed") is sent again unchanged until ingest answers; storage is exactly-once by event id, so a batch whose
  // first answer was lost counts once either way.
  const sender = processor.sendBatches(10, async (b) => {
    for (let attempt = 1; ; attempt++) {
      try {
        const r = await postJson(`${stack.baseUrl}/v1/ingest`, b, {
          authorization: `Bearer ${stack.tenant.publishableKey}`,
        });
        t.is(r.status, 202);
        return r;
      } catch (err) {
        if (attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  });

  for (let round = 0; round < 4; round++) {
    // Let it get some work done, then kill it while batches are in flight. Progress since this round began, not a
    // share of all accepted: the sender never pauses, and on a busy machine it can outrun a restarted processor, so
    // a share could fall out of reach however long the processor keeps storing.
    const before = (await stored()).n;
    await eventually(async () => (await stored()).n >= before + 400, { timeoutMs: 60_000, stepMs: 50 });
    await new Promise((r) => setTimeout(r, 150 + Math.random() * 300));
    await processor.kill(proc);
    proc = processor.spawnProcessor(env);
  }
  await sender.stop();

  const accepted = sender.accepted.size;
  await processor.assertStoredExactlyOnce(t, db, stack.tenant.siteId, accepted);
  const pages = await sql<{
    n: number;
  }>`select count(distinct page)::int as n from page_scores where site_id = ${stack.tenant.siteId}`.execute(db);
  t.is(pages.rows[0].n, 7);
});
