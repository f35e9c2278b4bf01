/**
 * Load shedding (issue 32): an ingest process offered twice what it served in a closed-loop run refuses the excess
 * with 503 and Retry-After, and its RSS and the answers' p99 stay bounded instead of growing with the queue.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { createTestDatabase } from '../../shared/testing/database.ts';
import { testServices } from '../../shared/testing/services.ts';
import { openDatabase } from '../../shared/db/connection.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { JetStreamBus } from '../../shared/bus/jetstream-bus.ts';
import { createLogger } from '../../shared/logger.ts';
import { capacity, overload, startIngest } from './shed-run.ts';

// Large batches: ingest's work per request (parse, validate, encode 50 events) is then far above the sender's, so on
// a busy machine the sender still offers twice what ingest serves.
const EVENTS = 50;

test('at twice the rate it serves, ingest refuses the excess with 503 + Retry-After; RSS and p99 stay bounded', async (t) => {
  // Starting ingest (and its background SDK build), a warm-up, 5 s closed loop and 15 s open loop: on a loaded machine
  // more than the suite's default 120 s.
  t.timeout(300_000);
  const database = await createTestDatabase('shed');
  const prefix = `shed${randomUUID().slice(0, 8)}`;
  t.teardown(async () => {
    const bus = await JetStreamBus.connect(testServices.natsUrl, createLogger('silent'));
    for (const s of ['EVENTS', 'NOTIFY']) await bus.deleteStream(`${prefix}_${s}`).catch(() => {});
    await bus.close();
    await database.drop();
  });
  const handle = await openDatabase({ url: database.url, dataDir: '' });
  const orgId = await insertOrg(handle.db, { name: 'shed', plan: 'enterprise' });
  const { publishableKey } = await provisionSite(handle.db, { orgId, name: 'shed', url: 'https://shed.example' });
  await handle.close();
  const services = {
    DATABASE_URL: database.url,
    NATS_URL: testServices.natsUrl,
    REDIS_URL: testServices.redisUrl,
    STREAM_PREFIX: prefix,
    FRICTION_SECRET: 'shed-test-secret-shed-test-secret-0123456789',
  };
  const ingest = await startIngest(services, {});
  t.teardown(() => ingest.stop());

  const served = await capacity(ingest, publishableKey, { events: EVENTS, seconds: 5, connections: 64 });
  const row = await overload(ingest, publishableKey, {
    events: EVENTS,
    rate: 2 * served,
    seconds: 15,
    connections: 64,
    maxInFlight: 20_000,
  });
  t.log(
    `served ${served.toFixed(0)} batches/s closed loop; at ${row.offeredRate.toFixed(0)}/s: ${row.acceptedRate.toFixed(0)}/s accepted, ${(row.shedShare * 100).toFixed(0)} % refused, p50 ${row.p50.toFixed(0)} ms, p99 ${row.p99.toFixed(0)} ms (last third ${row.p99Late.toFixed(0)}), RSS ${row.rssStartMb.toFixed(0)} → ${row.rssMaxMb.toFixed(0)} MB; answers ${JSON.stringify([...row.answers])}`,
  );
  // Every answer is an acceptance or a refusal the SDK retries after Retry-After: no other error, nothing unanswered.
  t.deepEqual(
    [...row.answers.keys()].filter((k) => k !== '202' && k !== '503 + Retry-After'),
    [],
  );
  t.is(row.dropped, 0, 'the sender never had 20,000 requests outstanding');
  // How much is refused depends on the CPU the machine leaves ingest from one second to the next (the closed-loop
  // figure is measured under the same noise), so the test asks only that it refused when it had to.
  t.true(row.shedShare > 0, 'the excess is refused');
  t.true(row.acceptedRate >= 0.2 * served, 'refusing costs little: ingest still accepts a good part of what it can');
  // Without shedding the queue grows all run: at twice the rate, the last requests wait about half the run (7 s;
  // measured here without shedding: p99 3.3 and 22 s). With it, the first seconds (the share rising) may queue on a
  // machine loaded far past its cores; the last third must not.
  t.true(row.p99 < 5000, `p99 ${row.p99.toFixed(0)} ms`);
  t.true(row.p99Late < 3000, `p99 of the last third ${row.p99Late.toFixed(0)} ms`);
  t.true(row.rssMaxMb - row.rssStartMb < 150, `RSS ${row.rssStartMb.toFixed(0)} → ${row.rssMaxMb.toFixed(0)} MB`);
});
