import { sql, type Kysely } from 'kysely';
import { runBatchLoop } from '../../shared/bus/batch-loop.ts';
import { recordPartitionHealth } from '../store/partition-health.ts';
import type { Bus } from '../../shared/bus/bus.ts';
import type { Topology } from '../../shared/contracts/subjects.ts';
import type { Database } from '../../shared/db/database.ts';
import { releaseClaims, releaseDeadClaims, type ClaimedDelivery } from '../store/deliveries.store.ts';
import type { Logger } from '../../shared/logger.ts';
import { DEFAULT_OUTBOUND_TIMEOUT_MS } from '../../shared/net/outbound.ts';
import { insertDeadLetter } from '../store/dead-letters.store.ts';
import {
  channelBuilders,
  ENDPOINT_GONE,
  SecretCache,
  sendDelivery,
  type ChannelSettings,
  type SendResult,
} from './channels.ts';
import { fanOut, NotificationSchema } from './fan-out.ts';
import { DeliveryCycle } from './delivery-cycle.ts';
import type { Finished } from './outcome-recorder.ts';
import { CLAIM_LEASE_MS, isGone } from './retry-policy.ts';

/** Deliveries one dispatcher sends at once (each waits on a remote server; the database work per send is small). */
const SEND_CONCURRENCY = 32;
/**
 * Deliveries to one destination (webhook endpoint, Slack or PagerDuty target, email address) one dispatcher holds
 * at once: a receiver that never answers ties up this many senders until their deadline, never all of them.
 */
const PER_DESTINATION = SEND_CONCURRENCY / 4;
/** Deliveries one claim takes at most: two rounds of senders, so a claim per 32 sends or fewer. */
const CLAIM_BATCH = 2 * SEND_CONCURRENCY;
/**
 * Longest a claimed delivery may wait in the local queue before its send starts: the send (10 s deadline) and its
 * record must end inside the lease, or another dispatcher could claim and send it too.
 */
const LOCAL_HOLD_MS = CLAIM_LEASE_MS - DEFAULT_OUTBOUND_TIMEOUT_MS - 20_000;
/** Idle poll of due deliveries; a fan-out that queued some wakes the sender at once. */
const POLL_MS = 500;
const NOTIFY_BATCH = 200;

export interface DispatcherOptions {
  db: Kysely<Database>;
  bus: Bus;
  topology: Topology;
  log: Logger;
  channels: ChannelSettings;
  /** Clock (tests move it to walk the retry schedule). */
  now?: () => number;
  /** Jitter source in [0, 1). */
  random?: () => number;
  ackWaitMs?: number;
  maxDeliver?: number;
  /**
   * No other dispatcher can be running on this database (the embedded one, which one process opens): the claims
   * found at start are an earlier life's, killed mid-send, and are handed back at once instead of waited out.
   */
  sole?: boolean;
}

/** The durable NOTIFY consumer every dispatcher shares (each notification reaches one of them). */
export const dispatcherConsumerName = (t: Topology): string => `${t.prefix ? `${t.prefix}_` : ''}dispatcher`;

/**
 * The dispatcher role: consumes NOTIFY, queues one delivery per target in the database (fan-out, idempotent),
 * and sends due deliveries with signing, retries and a delivery log. All delivery state is in the database:
 * a dispatcher that dies loses nothing (its claims come due again), and any number of dispatchers can run
 * (claims use `for update skip locked` and a lease, so no delivery is sent by two at once).
 */
export class Dispatcher {
  private readonly o: Required<Omit<DispatcherOptions, 'ackWaitMs' | 'maxDeliver' | 'sole'>> &
    Pick<DispatcherOptions, 'ackWaitMs' | 'maxDeliver' | 'sole'>;
  private readonly abort = new AbortController();
  /** Resolvers of the sender's idle waits (wake() ends them). */
  private readonly wakers = new Set<() => void>();
  /** wake() calls so far: a wake during a claim that found nothing means another claim, not an idle wait. */
  private wakes = 0;
  private readonly secrets: SecretCache;
  private readonly cycle: DeliveryCycle;
  /**
   * Webhook endpoints that answered 410 here, with the last claim that may have read them still active (Infinity
   * until the disabling is written): deliveries to them from those claims are given up unsent, as they would be
   * had their claim come after the disabling, instead of hitting a gone endpoint again.
   */
  private readonly goneUpTo = new Map<string, number>();
  private loops: Promise<unknown>[] = [];
  /**
   * Sends finished; outcomes whose record write has ended (written, or failed and logged); and the claims (that took
   * deliveries), record writes (cycles that recorded outcomes) and database statements (or transactions) of the
   * sending side (metrics, tests, the alerts bench).
   */
  readonly stats = {
    sent: 0,
    succeeded: 0,
    failed: 0,
    fannedOut: 0,
    recorded: 0,
    claims: 0,
    recordWrites: 0,
    statements: 0,
  };

  constructor(o: DispatcherOptions) {
    this.o = { ...o, now: o.now ?? (() => Date.now()), random: o.random ?? Math.random };
    this.secrets = new SecretCache(o.channels.instanceKeys);
    this.cycle = new DeliveryCycle({
      db: o.db,
      log: o.log,
      now: this.o.now,
      random: this.o.random,
      claimBatch: CLAIM_BATCH,
      perDestination: PER_DESTINATION,
      leaseMs: CLAIM_LEASE_MS,
      stopping: () => this.abort.signal.aborted,
      idle: () => this.idle(),
      wakes: () => this.wakes,
      onFailuresWritten: (group) => this.failuresWritten(group),
      stats: this.stats,
    });
  }

  async start(opts: { consume?: boolean } = {}): Promise<void> {
    if (this.o.sole) {
      const released = await releaseDeadClaims(this.o.db, new Date(this.o.now())).catch((err: unknown) => {
        this.o.log.warn({ err }, 'the claims left by an earlier process could not be handed back (due at their lease)');
        return 0;
      });
      if (released > 0) this.o.log.info({ deliveries: released }, 'claims left by an earlier process handed back');
    }
    if (opts.consume !== false) {
      const t = this.o.topology;
      const consumer = await this.o.bus.ensureConsumer({
        stream: t.notifyStream,
        name: dispatcherConsumerName(t),
        filterSubject: t.allNotifyFilter,
        maxDeliver: this.o.maxDeliver ?? 1000,
        ackWaitMs: this.o.ackWaitMs ?? 30_000,
        maxAckPending: NOTIFY_BATCH * 4,
      });
      const builders = channelBuilders(this.o.channels);
      const marker = 'notify.v1.';
      this.loops.push(
        runBatchLoop({
          consumer,
          schema: NotificationSchema,
          batchMessages: NOTIFY_BATCH,
          fetchExpiresMs: 1000,
          // An unreachable database pauses fan-out (no delivery spent); only content failures are dead-lettered.
          probe: async () => (await sql`select 1`.execute(this.o.db), true),
          signal: this.abort.signal,
          log: this.o.log,
          onHealth: recordPartitionHealth(this.o.db, this.o.log, consumer.name, this.o.now),
          handle: async (items) => {
            const n = await this.o.db.transaction().execute((trx) =>
              fanOut(
                trx,
                items.map(({ value, msg }) => ({
                  kind: msg.subject.slice(msg.subject.indexOf(marker) + marker.length),
                  n: value,
                  fallbackId: `${msg.subject}#${msg.seq}`,
                })),
                builders,
                new Date(this.o.now()),
              ),
            );
            this.stats.fannedOut += n;
            if (n > 0) this.wake();
          },
          deadLetter: (msg, reason) => insertDeadLetter(this.o.db, t.notifyStream, msg, reason),
        }),
      );
    }
    this.loops.push(this.sendLoop());
  }

  /** Sends due deliveries now (after a fan-out, or a test moving the clock). */
  wake(): void {
    this.wakes++;
    for (const w of [...this.wakers]) w();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.wake();
    await Promise.allSettled(this.loops);
  }

  /**
   * The sender: SEND_CONCURRENCY workers take claimed deliveries from the cycle's local queue and hand it their
   * outcomes; each cycle records what finished and claims what is due in one statement (see DeliveryCycle).
   * Database round trips per delivery: a share of one statement, instead of three of their own.
   */
  private async sendLoop(): Promise<void> {
    const cycle = this.cycle;
    let idle: Promise<void> | undefined;
    const worker = async (): Promise<void> => {
      while (!this.abort.signal.aborted) {
        const next = await cycle.take();
        if (!next) {
          if (!this.abort.signal.aborted && !cycle.wokenSinceClaim())
            await (idle ??= this.idle().finally(() => (idle = undefined)));
          continue;
        }
        // NOTE: a claim held locally past LOCAL_HOLD_MS could outlive its lease during the send, and another
        // dispatcher could then send it too: leave it, it comes due again when its lease ends.
        if (this.o.now() - next.claimedAt > LOCAL_HOLD_MS) {
          cycle.letGo(next.d);
          continue;
        }
        await this.deliver(next.d, next.claim);
      }
    };
    await Promise.all(Array.from({ length: SEND_CONCURRENCY }, worker));
    await cycle.drain();
    // Stopping: what was claimed but not sent is handed back at once rather than when its lease ends.
    const { queue } = cycle;
    await releaseClaims(
      this.o.db,
      queue.map((q) => ({ id: q.d.id, leasedUntil: new Date(q.claimedAt + CLAIM_LEASE_MS) })),
      new Date(this.o.now()),
    ).catch((err: unknown) =>
      this.o.log.warn({ err }, 'handing back unsent claims failed; they come due again after the lease'),
    );
  }

  /** Resolves after the poll interval, or at once on wake(). */
  private idle(): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(done, POLL_MS);
      const wakers = this.wakers;
      function done() {
        clearTimeout(t);
        wakers.delete(done);
        resolve();
      }
      wakers.add(done);
    });
  }

  /** One attempt of one claimed delivery; its record is written with the others that finish meanwhile. */
  private async deliver(d: ClaimedDelivery, claim: number): Promise<void> {
    const startedAt = new Date(this.o.now());
    const t0 = performance.now();
    const webhook = d.channel === 'webhook' ? d.endpoint_id : null;
    const result: SendResult =
      webhook && claim <= (this.goneUpTo.get(webhook) ?? 0)
        ? { kind: 'abandon', reason: ENDPOINT_GONE }
        : // NOTE: webhook-timestamp is the wall clock, whatever clock schedules retries: receivers check it against theirs.
          await sendDelivery(this.o.db, d, this.o.channels, this.secrets, Math.floor(Date.now() / 1000));
    const durationMs = performance.now() - t0;
    if (webhook && result.kind === 'attempt' && !result.outcome.ok && isGone(result.outcome.status))
      this.goneUpTo.set(webhook, Infinity);
    if (result.kind === 'attempt') {
      this.stats.sent++;
      if (result.outcome.ok) this.stats.succeeded++;
      else this.stats.failed++;
    }
    await this.cycle.add({ d, result, startedAt, durationMs });
  }

  /** After a failures write: endpoints it disabled are read as disabled by every claim from now on. */
  private failuresWritten(group: readonly Finished[]): void {
    for (const f of group) {
      if (
        f.d.channel === 'webhook' &&
        f.d.endpoint_id &&
        f.result.kind === 'attempt' &&
        !f.result.outcome.ok &&
        isGone(f.result.outcome.status)
      ) {
        this.goneUpTo.set(f.d.endpoint_id, this.cycle.claimSeq);
      }
    }
  }
}
