/**
 * Load shedding (issue 32): an ingest process on the real stream, offered half and then twice what it served closed
 * loop, by sender threads of their own timing each request from its scheduled send time. Judged against the same
 * run, not the clock: at twice the load, once the limit has come down, the accepted requests' p99 (the run's last
 * third) stays within a multiple of what it was at half, plus the latency target the limit is kept under; RSS stays bounded; every refusal is a 503 with Retry-After; and
 * every request answered 202 is in the stream (nothing accepted is lost).
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { createTestDatabase } from '../../shared/testing/database.ts';
import { testServices } from '../../shared/testing/services.ts';
import { openDatabase } from '../../shared/db/connection.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { JetStreamBus } from '../../shared/bus/jetstream-bus.ts';
import { createLogger } from '../../shared/logger.ts';
import { capacity, offer, startIngest, type ShedRow } from './shed-run.ts';

// Large batches: ingest's work per request (parse, validate, encode 50 events) is far above the sender's.
const EVENTS = 50;
const TARGET_MS = 50;

const describe = (r: ShedRow) =>
  `target ${r.targetRate.toFixed(0)}/s achieved ${r.achievedRate.toFixed(0)}/s (sender late p99 ${r.senderLateP99.toFixed(0)} ms, connection wait p99 ${r.connectionWaitP99.toFixed(0)} ms), refused ${r.refused}/${r.requests}, accepted p50 ${r.acceptedP50.toFixed(0)} p99 ${r.acceptedP99.toFixed(0)} ms (from issue ${r.acceptedServerP99.toFixed(0)}; last third ${r.acceptedP99LastThird.toFixed(0)}), RSS ${r.rssStartMb.toFixed(0)} → ${r.rssMaxMb.toFixed(0)} MB, ingest ${r.ingestCores.toFixed(2)} cores, senders ${r.senderCores.toFixed(2)}`;

test('at twice the rate it serves, ingest keeps the accepted p99 and its RSS bounded, refuses only with 503 + Retry-After and loses nothing it accepted', async (t) => {
  // Starting ingest (and its background SDK build), two closed-loop rounds and two open-loop runs: on a loaded
  // machine more than the suite's default.
  t.timeout(300_000);
  const database = await createTestDatabase('shed');
  const prefix = `shed${randomUUID().slice(0, 8)}`;
  const bus = await JetStreamBus.connect(testServices.natsUrl, createLogger('silent'));
  t.teardown(async () => {
    for (const s of ['EVENTS', 'NOTIFY']) await bus.deleteStream(`${prefix}_${s}`).catch(() => {});
    await bus.close();
    await database.drop();
  });
  const handle = await openDatabase({ url: database.url, dataDir: '' });
  const orgId = await insertOrg(handle.db, { name: 'shed', plan: 'enterprise' });
  const { publishableKey: key } = await provisionSite(handle.db, { orgId, name: 'shed', url: 'https://shed.example' });
  await handle.close();
  const ingest = await startIngest(
    {
      DATABASE_URL: database.url,
      NATS_URL: testServices.natsUrl,
      REDIS_URL: testServices.redisUrl,
      STREAM_PREFIX: prefix,
      FRICTION_SECRET: 'shed-test-secret-shed-test-secret-0123456789',
    },
    { INGEST_LATENCY_TARGET_MS: String(TARGET_MS) },
  );
  t.teardown(() => ingest.stop());
  const jsm = await jetstreamManager(bus.nc);
  const stored = async () => (await jsm.streams.info(`${prefix}_EVENTS`)).state.messages;

  const target = { ingest, key, events: EVENTS };
  // A bounded run (the long one is `npm run bench -- shed`): both cores are saturated while it sends, so the suite
  // keeps it to a few seconds a phase. Twelve seconds at twice the load: the limit comes down within the first
  // seconds, and the last third shows whether it holds; without shedding the queue grows by what is served each
  // second, so the last third's requests wait eight seconds and more, far over the bound below.
  const served = await capacity(target, { seconds: 3, connections: 8 });
  const before = await stored();
  const half = await offer(target, { rate: served / 2, seconds: 4, connections: 512 });
  const double = await offer(target, { rate: 2 * served, seconds: 12, connections: 512 });
  t.log(`served ${served.toFixed(0)} batches/s closed loop`);
  t.log(`0.5×: ${describe(half)}`);
  t.log(`2×: ${describe(double)}`);

  for (const r of [half, double]) {
    t.deepEqual([...r.other], [], 'every answer is a 202 or a refusal');
    t.is(r.refusedWithoutRetryAfter, 0, 'every refusal carries Retry-After');
  }
  t.is((await stored()) - before, half.accepted + double.accepted, 'every batch answered 202 is in the stream');
  // Whether it had to refuse depends on the CPU the machine left ingest from one second to the next (the closed-loop
  // figure was measured under the same noise; on a machine busy with other work a process given a few percent of a
  // core is slow for lack of CPU, not for its own work, and refusing would not help), so the share is reported, and
  // what must hold either way is judged: the latency and the memory.
  t.log(`2×: ${((double.refused / double.requests) * 100).toFixed(0)} % refused`);
  // Without shedding the queue grows all run; with it, once the limit has come down (the first seconds at twice the
  // load, while the adaptive limit still admits what it admitted at half: the whole run's p99 is logged above), the
  // accepted requests' p99 over the last third of the run is within a multiple of the same process's p99 at half,
  // plus the target. The whole run's p99 is the adaptation's price and depends on how fast the machine lets the limit
  // learn: CI's whole-suite run, another test file beside this one, once saw 3.8 s.
  const bound = 4 * half.acceptedP99 + 20 * TARGET_MS;
  t.true(
    double.acceptedP99LastThird <= bound,
    `p99 of the last third ${double.acceptedP99LastThird.toFixed(0)} ms, bound ${bound.toFixed(0)} ms`,
  );
  t.true(
    double.rssMaxMb - double.rssStartMb < 150,
    `RSS ${double.rssStartMb.toFixed(0)} → ${double.rssMaxMb.toFixed(0)} MB`,
  );
});
