import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { DeliveryRow } from '../../shared/db/queries/deliveries.queries.ts';

type Db = Kysely<Database> | Transaction<Database>;

/*
 * The dispatcher's statements: claiming due deliveries, recording attempts, handing claims back (processor/dispatcher).
 * Raw SQL where the statement is one round trip of several data-modifying CTEs over unnested column arrays, which
 * kysely's builder cannot express; the builder elsewhere.
 */

/** The webhook endpoint of a claimed delivery, read in the claim's statement (null for other channels). */
export interface ClaimedEndpoint {
  url: string;
  secret_sealed: string;
  active: boolean;
  deleted_at: Date | null;
}
/** What a send and its record need of a claimed delivery (nothing more is read: every column costs parsing per row). */
export type ClaimedDelivery = Pick<
  DeliveryRow,
  'id' | 'channel' | 'endpoint_id' | 'event_id' | 'target' | 'body' | 'attempts'
> & { endpoint: ClaimedEndpoint | null };

type ClaimedRow = Omit<ClaimedDelivery, 'endpoint'> & {
  ep_url: string | null;
  ep_secret_sealed: string | null;
  ep_active: boolean | null;
  ep_deleted_at: Date | null;
};

/**
 * How many deliveries to one destination (a webhook endpoint, or a channel's target) a dispatcher holds at once,
 * claimed or being sent: `busy` are the destinations it holds some of, with how many.
 */
export interface DestinationCap {
  perDestination: number;
  busy: readonly { key: string; held: number }[];
}

/** A delivery's destination as destinationKey spells it in SQL. */
const destinationSql = sql`q.channel || ':' || coalesce(q.endpoint_id::text, q.target)`;

/** The destination of a claimed delivery, the key DestinationCap counts by. */
export const destinationKey = (d: Pick<ClaimedDelivery, 'channel' | 'endpoint_id' | 'target'>): string =>
  `${d.channel}:${d.endpoint_id ?? d.target}`;

/**
 * The claim as a CTE `c` (see claimDueDeliveries). A delivery with an `order_key` waits while an earlier one of the
 * same key to the same channel, endpoint and target is pending (retrying, or claimed by a sender): an alert's
 * resolve never overtakes its trigger. An earlier one that failed for good no longer holds it back.
 * With a cap, no destination gets more than `perDestination` held at once: destinations already at the cap are
 * left out of the scan, the others get what is left of theirs (row_number per destination), so a receiver that
 * never answers holds a few senders and the claim goes on to everyone else's deliveries.
 */
function claimCte(now: Date, limit: number, leaseMs: number, cap?: DestinationCap) {
  const due = sql`q.status = 'pending' and q.next_attempt_at <= ${now}
          and (q.order_key is null or not exists (
            select 1 from notification_deliveries p
            where p.order_key = q.order_key and p.status = 'pending' and p.channel = q.channel and p.queued_seq < q.queued_seq
              and p.endpoint_id is not distinct from q.endpoint_id and p.target = q.target))`;
  const lease = sql`update notification_deliveries d set next_attempt_at = ${new Date(now.getTime() + leaseMs)}, updated_at = ${now}, claimed = true`;
  const returning = sql`returning d.id, d.channel, d.endpoint_id, d.event_id, d.target, d.body, d.attempts`;
  if (!cap)
    return sql`c as (${lease}
      where d.id in (
        select q.id from notification_deliveries q where ${due}
        order by q.next_attempt_at limit ${limit} for update of q skip locked)
      ${returning})`;
  const full = cap.busy.filter((b) => b.held >= cap.perDestination).map((b) => b.key);
  // NOTE: a candidate window of 4 claims: the rows the cap leaves out are locked for this statement only.
  return sql`c as (${lease}
      where d.id in (
        select r.id from (
          select q.id, q.next_attempt_at, q.dest,
            row_number() over (partition by q.dest order by q.next_attempt_at) as rn
          from (
            select q.id, q.next_attempt_at, ${destinationSql} as dest from notification_deliveries q
            where ${due} and ${destinationSql} <> all(${full}::text[])
            order by q.next_attempt_at limit ${limit * 4} for update of q skip locked) q) r
        left join unnest(${cap.busy.map((b) => b.key)}::text[], ${cap.busy.map((b) => b.held)}::int[]) as b(dest, held)
          on b.dest = r.dest
        where r.rn + coalesce(b.held, 0) <= ${cap.perDestination}
        order by r.next_attempt_at limit ${limit})
      ${returning})`;
}

/** The claimed rows of CTE `c` with their webhook endpoints. */
const claimedSelect = sql`select c.id, c.channel, c.endpoint_id, c.event_id, c.target, c.body, c.attempts,
      e.url as ep_url, e.secret_sealed as ep_secret_sealed, e.active as ep_active, e.deleted_at as ep_deleted_at
    from c left join webhook_endpoints e on c.channel = 'webhook' and e.id = c.endpoint_id`;

function toClaimed({ ep_url, ep_secret_sealed, ep_active, ep_deleted_at, ...d }: ClaimedRow): ClaimedDelivery {
  return {
    ...d,
    endpoint:
      ep_url === null || ep_secret_sealed === null
        ? null
        : { url: ep_url, secret_sealed: ep_secret_sealed, active: ep_active === true, deleted_at: ep_deleted_at },
  };
}

/**
 * Claims up to `limit` due deliveries for one dispatcher, with their webhook endpoints, in one statement: their
 * due time moves `leaseMs` ahead, so no other dispatcher takes them while this one sends (rows another dispatcher
 * is claiming right now are skipped), and a dispatcher that dies mid-send leaves them due again when the lease ends.
 */
export async function claimDueDeliveries(
  db: Kysely<Database>,
  now: Date,
  limit: number,
  leaseMs: number,
  cap?: DestinationCap,
): Promise<ClaimedDelivery[]> {
  const { rows } = await sql<ClaimedRow>`with ${claimCte(now, limit, leaseMs, cap)} ${claimedSelect}`.execute(db);
  return rows.map(toClaimed);
}

/**
 * Hands claimed deliveries back unsent (a dispatcher stopping): due at `now` again, so another dispatcher takes them
 * without waiting for the lease. Only rows still under this claim's lease are touched (`leasedUntil` is exactly
 * what the claim wrote), never one another dispatcher has claimed since.
 */
export async function releaseClaims(
  db: Db,
  claims: readonly { id: string; leasedUntil: Date }[],
  now: Date,
): Promise<void> {
  if (claims.length === 0) return;
  await sql`
    update notification_deliveries n set next_attempt_at = ${now}, updated_at = ${now}, claimed = false
    from unnest(${claims.map((c) => c.id)}::uuid[], ${claims.map((c) => c.leasedUntil.toISOString())}::timestamptz[]) as v(id, leased_until)
    where n.id = any(${claims.map((c) => c.id)}::uuid[]) and n.id = v.id and n.status = 'pending' and n.next_attempt_at = v.leased_until`.execute(
    db,
  );
}

/**
 * Hands back every claim (due at `now` again): for a dispatcher that knows no other can be running (the embedded
 * database is one process's), the claims it finds at start are an earlier life's, killed mid-send. Scheduled retries
 * keep their time. Returns how many.
 */
export async function releaseDeadClaims(db: Db, now: Date): Promise<number> {
  const r = await db
    .updateTable('notification_deliveries')
    .set({ next_attempt_at: now, updated_at: now, claimed: false })
    .where('status', '=', 'pending')
    .where('claimed', '=', true)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export interface AttemptRecord {
  deliveryId: string;
  /** The attempt count the claim saw: the write applies only if no one else recorded an attempt since. */
  claimedAttempts: number;
  status: 'succeeded' | 'failed';
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
  startedAt: Date;
  /** Due time of the next attempt; null: the delivery is finished (succeeded, or failed for good). */
  nextAttemptAt: Date | null;
}

/** The records as CTEs `v` (the values), `d` (deliveries moved on), `att` (attempts logged), `e` (streaks cleared). */
function recordCtes(records: readonly AttemptRecord[], now: Date) {
  const col = <T>(f: (r: AttemptRecord) => T) => records.map(f);
  return sql`v as (
      select * from unnest(
        ${col((r) => r.deliveryId)}::uuid[], ${col((r) => r.claimedAttempts)}::int[], ${col((r) => r.status)}::text[],
        ${col((r) => r.httpStatus)}::int[], ${col((r) => r.error)}::text[], ${col((r) => Math.round(r.durationMs))}::int[],
        ${col((r) => r.startedAt.toISOString())}::timestamptz[], ${col((r) => r.nextAttemptAt?.toISOString() ?? null)}::timestamptz[]
      ) as v(id, claimed, status, http_status, error, duration_ms, started_at, next_at)),
    d as (
      update notification_deliveries n set
        status = case when v.status = 'succeeded' then 'succeeded' when v.next_at is not null then 'pending' else 'failed' end,
        attempts = v.claimed + 1, last_http_status = v.http_status, last_error = v.error, updated_at = ${now},
        next_attempt_at = coalesce(v.next_at, ${now}), claimed = false,
        completed_at = case when v.status = 'failed' and v.next_at is not null then null else ${now}::timestamptz end
      from v
      -- NOTE: the id list again, as an index condition: joined on v alone, the planner hashed v against an index scan
      -- of every pending delivery (in the alerts bench, 2,000 rows read to write 32; more with a bigger backlog).
      where n.id = any(${col((r) => r.deliveryId)}::uuid[]) and n.id = v.id and n.attempts = v.claimed and n.status = 'pending'
      returning n.id, n.org_id, n.channel, n.endpoint_id, v.claimed, v.status, v.http_status, v.error, v.duration_ms, v.started_at, v.next_at),
    att as (
      insert into delivery_attempts (delivery_id, org_id, attempt, status, http_status, error, duration_ms, started_at, next_attempt_at)
      select id, org_id, claimed + 1, status, http_status, error, duration_ms, started_at, next_at from d),
    e as (
      update webhook_endpoints set consecutive_failures = 0, failing_since = null
      where id in (select endpoint_id from d where channel = 'webhook' and status = 'succeeded')
        and (consecutive_failures <> 0 or failing_since is not null))`;
}

/**
 * Stores many attempts in one statement (atomic on its own, one round trip whatever their number): moves each
 * delivery on (succeeded; pending until `nextAttemptAt`; or failed for good), logs each attempt, and clears the
 * failure streak of the webhook endpoints a success reached. A record whose claim went stale (another dispatcher
 * recorded an attempt since) writes nothing. Returns the ids of the deliveries written.
 */
export async function recordAttempts(db: Db, records: readonly AttemptRecord[], now: Date): Promise<Set<string>> {
  if (records.length === 0) return new Set();
  const { rows } = await sql<{ id: string }>`with ${recordCtes(records, now)} select id from d`.execute(db);
  return new Set(rows.map((r) => r.id));
}

/**
 * recordAttempts and claimDueDeliveries in ONE statement (a dispatcher's cycle: what finished is written and what
 * is due is taken in one round trip and one commit). The claim cannot take a row this statement records: those are
 * leased to this dispatcher, not due (and should a lease have run out, a row is changed by one of the two only).
 */
export async function recordAndClaim(
  db: Kysely<Database>,
  records: readonly AttemptRecord[],
  now: Date,
  limit: number,
  leaseMs: number,
  cap?: DestinationCap,
): Promise<{ written: Set<string>; claimed: ClaimedDelivery[] }> {
  if (records.length === 0)
    return { written: new Set(), claimed: limit > 0 ? await claimDueDeliveries(db, now, limit, leaseMs, cap) : [] };
  if (limit <= 0) return { written: await recordAttempts(db, records, now), claimed: [] };
  const { rows } = await sql<ClaimedRow & { recorded: boolean }>`
    with ${recordCtes(records, now)}, ${claimCte(now, limit, leaseMs, cap)}
    select d.id, null::text as channel, null::uuid as endpoint_id, null::text as event_id, null::text as target, null::text as body,
      null::int as attempts, null::text as ep_url, null::text as ep_secret_sealed, null::boolean as ep_active, null::timestamptz as ep_deleted_at,
      true as recorded
    from d
    union all
    select *, false from (${claimedSelect}) claimed`.execute(db);
  const written = new Set<string>();
  const claimed: ClaimedDelivery[] = [];
  for (const { recorded, ...r } of rows) {
    if (recorded) written.add(r.id);
    else claimed.push(toClaimed(r));
  }
  return { written, claimed };
}

/**
 * Of these claimed deliveries, the ones still as claimed (pending, no attempt recorded since), locked until the
 * caller's transaction ends: what a failed attempt may be counted against its endpoint for.
 */
export async function lockClaimedDeliveries(
  trx: Transaction<Database>,
  claims: readonly { id: string; attempts: number }[],
): Promise<Set<string>> {
  if (claims.length === 0) return new Set();
  const rows = await trx
    .selectFrom('notification_deliveries')
    .select(['id', 'attempts'])
    .where(
      'id',
      'in',
      claims.map((c) => c.id),
    )
    .where('status', '=', 'pending')
    .forUpdate()
    .execute();
  const seen = new Map(rows.map((r) => [r.id, r.attempts]));
  return new Set(claims.filter((c) => seen.get(c.id) === c.attempts).map((c) => c.id));
}

/** Finishes deliveries without an attempt (their endpoint was disabled or removed meanwhile), one statement per reason. */
export async function abandonDeliveries(
  db: Db,
  abandoned: readonly { id: string; reason: string }[],
  now: Date,
): Promise<void> {
  const byReason = Map.groupBy(abandoned, (a) => a.reason);
  for (const [reason, items] of byReason) {
    await db
      .updateTable('notification_deliveries')
      .set({ status: 'failed', last_error: reason, completed_at: now, updated_at: now })
      .where(
        'id',
        'in',
        items.map((a) => a.id),
      )
      .where('status', '=', 'pending')
      .execute();
  }
}
