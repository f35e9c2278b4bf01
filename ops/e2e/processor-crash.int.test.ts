import test from 'ava';
import { assertStoredExactlyOnce, kill, spawnProcessor } from '../testing/processor-process.ts';
import { sql } from 'kysely';
import { startTestStack } from '../testing/stack.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { postJson } from '../../shared/testing/http-client.ts';

test('the processor SIGKILLed mid-stream several times and restarted stores exactly what was accepted', async (t) => {
  const stack = await startTestStack({ processor: false });
  const env = {
    DATABASE_URL: stack.databaseUrl!,
    NATS_URL: stack.config.NATS_URL!,
    STREAM_PREFIX: stack.config.STREAM_PREFIX,
    EVENT_PARTITIONS: String(stack.config.EVENT_PARTITIONS),
    // What a killed processor had fetched comes back after the ack wait: keep the test short.
    PROCESSOR_ACK_WAIT_MS: '3000',
    // A killed processor's partition leases expire before its successor takes them: keep that short too.
    PROCESSOR_LEASE_TTL_MS: '2000',
  };
  let proc = spawnProcessor(env);
  t.teardown(async () => {
    await kill(proc);
    await stack.stop();
  });
  const db = stack.infra.database.db;
  const stored = async () =>
    (
      await sql<{
        n: number;
        d: number;
      }>`select count(*)::int as n, count(distinct id)::int as d from events where site_id = ${stack.tenant.siteId}`.execute(
        db,
      )
    ).rows[0];

  // Accepted = the event ids of every batch ingest answered 202 for. A request a busy machine dropped ("fetch
  // failed") is sent again unchanged until ingest answers; storage is exactly-once by event id, so a batch whose
  // first answer was lost counts once either way.
  const acceptedIds = new Set<string>();
  const deliver = async (b: ReturnType<typeof sdkBatch>) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await postJson(`${stack.baseUrl}/v1/ingest`, b, {
          authorization: `Bearer ${stack.tenant.publishableKey}`,
        });
      } catch (err) {
        if (attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  };
  let sending = true;
  const sender = (async () => {
    let i = 0;
    while (sending) {
      const batches = Array.from({ length: 10 }, () =>
        sdkBatch({ events: 20, sessionId: `s-${i++ % 40}`, page: `/p${i % 7}` }),
      );
      const results = await Promise.all(batches.map(deliver));
      results.forEach((r, k) => {
        t.is(r.status, 202);
        for (const e of batches[k].events) acceptedIds.add(e.id as string);
      });
    }
  })();

  for (let round = 0; round < 4; round++) {
    // Let it get some work done, then kill it while batches are in flight. Progress since this round began, not a
    // share of all accepted: the sender never pauses, and on a busy machine it can outrun a restarted processor, so
    // a share could fall out of reach however long the processor keeps storing.
    const before = (await stored()).n;
    await eventually(async () => (await stored()).n >= before + 400, { timeoutMs: 60_000, stepMs: 50 });
    await new Promise((r) => setTimeout(r, 150 + Math.random() * 300));
    await kill(proc);
    proc = spawnProcessor(env);
  }
  sending = false;
  await sender;

  const accepted = acceptedIds.size;
  await assertStoredExactlyOnce(t, db, stack.tenant.siteId, accepted);
  const pages = await sql<{
    n: number;
  }>`select count(distinct page)::int as n from page_scores where site_id = ${stack.tenant.siteId}`.execute(db);
  t.is(pages.rows[0].n, 7);
});
