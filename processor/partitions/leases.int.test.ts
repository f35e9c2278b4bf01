import { eventually } from '../../shared/testing/eventually.ts';
import { postJson } from '../../shared/testing/http-client.ts';
import test from 'ava';
import {
  assertStoredExactlyOnce,
  kill,
  leaseOwners,
  processorEnv,
  sendBatches,
  spawnProcessor,
  storedEvents,
} from '../../ops/testing/processor-process.ts';
import { sql } from 'kysely';
import { startTestStack } from '../../ops/testing/stack.ts';
import { withTestDatabase } from '../../shared/testing/database.ts';
import { claimPartition, fencedBulk, PartitionFencedError } from './fence.ts';

test('two processors share the 16 partitions by lease; one SIGKILLed, the other takes them over and stored = accepted', async (t) => {
  const stack = await startTestStack({ processor: false });
  const env = processorEnv(stack, {
    EVENT_PARTITIONS: '16',
    PROCESSOR_PARTITIONS: 'auto',
    PROCESSOR_LEASE_TTL_MS: '2000',
    // What the killed processor had fetched comes back after the ack wait: keep the test short.
    PROCESSOR_ACK_WAIT_MS: '3000',
  });
  const procs = [spawnProcessor(env), spawnProcessor(env)];
  t.teardown(async () => {
    await Promise.all(procs.map(kill));
    await stack.stop();
  });
  const db = stack.infra.database.db;
  const owners = () => leaseOwners(db);
  // Both processors hold a fair share (8 + 8): each claimed its partitions' epochs in the database.
  const shared = await eventually(
    async () => {
      const o = await owners();
      return o.length === 2 && o.every((r) => r.n === 8) ? o : undefined;
    },
    { timeoutMs: 60_000 },
  );
  t.deepEqual(
    shared.map((r) => r.n),
    [8, 8],
  );

  const stored = () => storedEvents(db, stack.tenant.siteId);
  const sender = sendBatches(5, (b) =>
    postJson(`${stack.baseUrl}/v1/ingest`, b, { authorization: `Bearer ${stack.tenant.publishableKey}` }),
  );
  await eventually(async () => (await stored()).n > 500, { timeoutMs: 60_000, stepMs: 50 });
  // The site's partition belongs to one of the two: kill whichever it is, then the other must take all 16.
  const { owner } = (
    await sql<{
      owner: string;
    }>`select owner from partition_leases where partition = (select partition from partition_leases order by partition limit 1)`.execute(
      db,
    )
  ).rows[0];
  const victim = procs.find((p) => owner.includes(`-${p.pid}-`)) ?? procs[0];
  const killedAt = Date.now();
  await kill(victim);
  const survivor = procs.find((p) => p !== victim)!;
  await eventually(
    async () => {
      const o = await owners();
      return o.length === 1 && o[0].n === 16 && o[0].owner.includes(`-${survivor.pid}-`);
    },
    { timeoutMs: 60_000 },
  );
  const takeoverMs = Date.now() - killedAt;
  t.log(`takeover of the killed processor's 8 partitions: ${takeoverMs} ms (lease TTL 2000 ms)`);
  // Lease TTL 2 s: expiry (≤ 2 s), noticed within a beat (0.5 s), rebuild; generous for a busy machine.
  t.true(takeoverMs < 20_000);
  await new Promise((r) => setTimeout(r, 500));
  await sender.stop();
  const accepted = sender.accepted.size;
  await assertStoredExactlyOnce(t, db, stack.tenant.siteId, accepted);
});

test("a stale owner's write is refused: a batch fenced at an older epoch rolls back, the new owner's commits", async (t) => {
  // Only the database: no stack to start for a fence (the first test runs the processors).
  const database = await withTestDatabase('leases');
  t.teardown(() => database.close());
  const { db, bulk } = database.handle;
  const stale = await claimPartition(db, 3, 'old-owner');
  const fresh = await claimPartition(db, 3, 'new-owner');
  t.true(fresh > stale);
  // Any write of the batch: a row the test can look for afterwards.
  const marker = (who: string) =>
    sql`insert into partition_leases (partition, epoch, owner) values (${who === 'stale' ? 1000 : 1001}, 1, ${`fence-test-${who}`})`;
  let fencedSeen: PartitionFencedError | undefined;
  const staleBulk = fencedBulk(bulk, 3, stale, (err) => (fencedSeen = err));
  const err = await t.throwsAsync(staleBulk(async ({ trx }) => marker('stale').execute(trx)));
  t.true(err instanceof PartitionFencedError);
  t.is(fencedSeen?.current, fresh);
  await fencedBulk(bulk, 3, fresh, () => t.fail('the current owner is not fenced'))(async ({ trx }) =>
    marker('fresh').execute(trx),
  );
  const rows = await sql<{ owner: string }>`select owner from partition_leases where owner like 'fence-test-%'`.execute(
    db,
  );
  t.deepEqual(
    rows.rows.map((r) => r.owner),
    ['fence-test-fresh'],
  );
});

test('a claim waits for the batch the previous owner is committing, and refuses that owner afterwards', async (t) => {
  const database = await withTestDatabase('leases');
  t.teardown(() => database.close());
  const { db, bulk } = database.handle;
  const first = await claimPartition(db, 5, 'a');
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let inside!: () => void;
  const entered = new Promise<void>((r) => (inside = r));
  const batch = fencedBulk(bulk, 5, first, () => {})(async () => {
    inside();
    await held;
  });
  await entered;
  let claimed: number | undefined;
  const claim = claimPartition(db, 5, 'b').then((e) => (claimed = e));
  await new Promise((r) => setTimeout(r, 300));
  t.is(claimed, undefined, 'the claim waits for the in-flight batch of the old owner');
  release();
  await batch;
  t.is(await claim, first + 1);
  await t.throwsAsync(
    fencedBulk(bulk, 5, first, () => {})(async () => undefined),
    {
      instanceOf: PartitionFencedError,
    },
  );
});
