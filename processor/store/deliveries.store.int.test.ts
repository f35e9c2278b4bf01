import { randomUUID } from 'node:crypto';
import test from 'ava';
import type { Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { loggedTestDatabase } from '../../shared/testing/database.ts';
import { insertOrg } from '../../shared/tenancy/provision.ts';
import { claimDueDeliveries, recordAndClaim, releaseDeadClaims, type AttemptRecord } from './deliveries.store.ts';
import { insertWebhookEndpointRow } from '../../ops/testing/rows.ts';

const LEASE_MS = 60_000;

/** `n` pending webhook deliveries to one endpoint, due 1 ms apart from `t0`; their ids in that order. */
async function insertDeliveries(db: Kysely<Database>, orgId: string, endpointId: string, t0: Date, n: number) {
  const ids = Array.from({ length: n }, () => randomUUID());
  await db
    .insertInto('notification_deliveries')
    .values(
      ids.map((id, i) => ({
        id,
        event_id: `evt_${i}`,
        event_type: 'alert.triggered',
        org_id: orgId,
        site_id: null,
        channel: 'webhook',
        endpoint_id: endpointId,
        target: 'https://hooks.example/in',
        body: `{"n":${i}}`,
        next_attempt_at: new Date(t0.getTime() + i),
      })),
    )
    .execute();
  return ids;
}

test('recordAndClaim: one statement records the finished attempts and claims the due deliveries, never one it records', async (t) => {
  let statements = 0;
  const db = await loggedTestDatabase(t, 'deliveries_queries', (e) => void (e.level === 'query' && statements++));
  const orgId = await insertOrg(db, { name: 'o' });
  const endpointId = await insertWebhookEndpointRow(db, orgId, 'https://hooks.example/in', {
    consecutive_failures: 3,
    failing_since: new Date(0),
  });
  const t0 = new Date(Date.UTC(2026, 0, 1));
  const ids = await insertDeliveries(db, orgId, endpointId, t0, 6);

  // Claim the first two, then record them while claiming the rest, at a time past their lease: the claim must not
  // take (and the record must still write) the rows it records.
  const first = await claimDueDeliveries(db, new Date(t0.getTime() + 10), 2, LEASE_MS);
  t.deepEqual(first.map((d) => d.id).sort(), ids.slice(0, 2).sort(), 'the earliest due');
  t.like(first[0]!.endpoint, { url: 'https://hooks.example/in', secret_sealed: 'sealed', active: true });
  const later = new Date(t0.getTime() + LEASE_MS + 1000);
  const records: AttemptRecord[] = first.map((d) => ({
    deliveryId: d.id,
    claimedAttempts: d.attempts,
    status: 'succeeded',
    httpStatus: 204,
    error: null,
    durationMs: 3,
    startedAt: later,
    nextAttemptAt: null,
  }));
  statements = 0;
  const { written, claimed } = await recordAndClaim(db, records, later, 10, LEASE_MS);
  t.is(statements, 1, 'one statement');
  t.deepEqual([...written].sort(), ids.slice(0, 2).sort());
  t.deepEqual(claimed.map((d) => d.id).sort(), ids.slice(2).sort());
  t.true(
    claimed.every(
      (d) => d.attempts === 0 && d.endpoint?.url === 'https://hooks.example/in' && d.body.startsWith('{"n":'),
    ),
  );

  const rows = new Map((await db.selectFrom('notification_deliveries').selectAll().execute()).map((r) => [r.id, r]));
  for (const id of ids.slice(0, 2)) t.like(rows.get(id), { status: 'succeeded', attempts: 1, last_http_status: 204 });
  for (const id of ids.slice(2)) {
    t.like(rows.get(id), { status: 'pending', attempts: 0 });
    t.is(rows.get(id)!.next_attempt_at.getTime(), later.getTime() + LEASE_MS, 'leased');
  }
  const attempts = await db.selectFrom('delivery_attempts').selectAll().orderBy('delivery_id').execute();
  t.deepEqual(
    attempts.map((a) => [a.delivery_id, a.attempt, a.status, a.http_status]),
    ids
      .slice(0, 2)
      .sort()
      .map((id) => [id, 1, 'succeeded', 204]),
  );
  // A success clears the endpoint's failure streak.
  t.like(await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', endpointId).executeTakeFirstOrThrow(), {
    consecutive_failures: 0,
    failing_since: null,
  });

  // A record whose claim went stale (its attempt count moved on) writes nothing; a claim with nothing due takes nothing.
  const again = await recordAndClaim(db, [{ ...records[0]!, claimedAttempts: 0 }], later, 10, LEASE_MS);
  t.is(again.written.size, 0);
  t.deepEqual(again.claimed, []);
  t.is((await db.selectFrom('delivery_attempts').select('id').execute()).length, 2);
});

test("releaseDeadClaims hands back a killed dispatcher's claims and leaves scheduled retries (a Retry-After among them) their time", async (t) => {
  const db = await loggedTestDatabase(t, 'dead_claims', () => {});
  const orgId = await insertOrg(db, { name: 'o' });
  const endpointId = await insertWebhookEndpointRow(db, orgId, 'https://hooks.example/in');
  const t0 = new Date(Date.UTC(2026, 0, 1));
  const ids = await insertDeliveries(db, orgId, endpointId, t0, 3);
  // The dispatcher claims all three, sends the last and is told to retry in exactly the lease's 60 s (Retry-After:
  // 60), then is killed with the first two still claimed.
  const at = new Date(t0.getTime() + 10);
  const claimed = await claimDueDeliveries(db, at, 3, LEASE_MS);
  t.is(claimed.length, 3);
  const retry = claimed.find((d) => d.id === ids[2])!;
  const { written } = await recordAndClaim(
    db,
    [
      {
        deliveryId: retry.id,
        claimedAttempts: retry.attempts,
        status: 'failed',
        httpStatus: 503,
        error: 'HTTP 503',
        durationMs: 3,
        startedAt: at,
        nextAttemptAt: new Date(at.getTime() + LEASE_MS),
      },
    ],
    at,
    0,
    LEASE_MS,
  );
  t.deepEqual([...written], [ids[2]]);

  const restart = new Date(t0.getTime() + 5000);
  t.is(await releaseDeadClaims(db, restart), 2);
  const due = new Map(
    (await db.selectFrom('notification_deliveries').select(['id', 'next_attempt_at', 'claimed']).execute()).map((r) => [
      r.id,
      r,
    ]),
  );
  for (const id of ids.slice(0, 2)) t.like(due.get(id), { next_attempt_at: restart, claimed: false }, 'due again');
  t.like(
    due.get(ids[2]),
    { next_attempt_at: new Date(at.getTime() + LEASE_MS), claimed: false },
    'its retry time kept',
  );
  t.deepEqual(
    (await claimDueDeliveries(db, restart, 10, LEASE_MS)).map((d) => d.id).sort(),
    ids.slice(0, 2).sort(),
    'the next claim takes them at once',
  );
});
