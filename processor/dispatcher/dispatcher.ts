import { sql, type Kysely } from 'kysely';
import { runBatchLoop } from '../../shared/bus/batch-loop.ts';
import type { Bus } from '../../shared/bus/bus.ts';
import type { Topology } from '../../shared/contracts/subjects.ts';
import type { Database } from '../../shared/db/database.ts';
import { abandonDelivery, claimDueDeliveries, recordAttempt, recordSuccess, type DeliveryRow } from '../../shared/db/queries/deliveries.queries.ts';
import { openDegradation } from '../../shared/db/queries/degradation.queries.ts';
import type { Logger } from '../../shared/logger.ts';
import { insertDeadLetter } from '../store/dead-letters.store.ts';
import { channelBuilders, sendDelivery, type ChannelSettings } from './channels.ts';
import { fanOut, NotificationSchema } from './fan-out.ts';
import { afterAttempt, CLAIM_LEASE_MS, nextRetryDelayMs, type AttemptOutcome } from './retry-policy.ts';

/** Deliveries one dispatcher sends at once (each waits on a remote server; the database work per send is small). */
const SEND_CONCURRENCY = 32;
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
  private readonly o: Required<Omit<DispatcherOptions, 'ackWaitMs' | 'maxDeliver'>> & Pick<DispatcherOptions, 'ackWaitMs' | 'maxDeliver'>;
  private readonly abort = new AbortController();
  private wakeSender: (() => void) | undefined;
  private loops: Promise<unknown>[] = [];
  /** Sends started and finished (metrics and tests). */
  readonly stats = { sent: 0, succeeded: 0, failed: 0, fannedOut: 0 };

  constructor(o: DispatcherOptions) {
    this.o = { ...o, now: o.now ?? (() => Date.now()), random: o.random ?? Math.random };
  }

  async start(opts: { consume?: boolean } = {}): Promise<void> {
    if (opts.consume !== false) {
      const t = this.o.topology;
      const consumer = await this.o.bus.ensureConsumer({
        stream: t.notifyStream, name: dispatcherConsumerName(t), filterSubject: t.allNotifyFilter,
        maxDeliver: this.o.maxDeliver ?? 1000, ackWaitMs: this.o.ackWaitMs ?? 30_000, maxAckPending: NOTIFY_BATCH * 4,
      });
      const builders = channelBuilders(this.o.channels);
      const marker = 'notify.v1.';
      this.loops.push(
        runBatchLoop({
          consumer, schema: NotificationSchema, batchMessages: NOTIFY_BATCH, fetchExpiresMs: 1000,
          // An unreachable database pauses fan-out (no delivery spent); only content failures are dead-lettered.
          probe: async () => (await sql`select 1`.execute(this.o.db), true),
          signal: this.abort.signal, log: this.o.log,
          handle: async (items) => {
            const n = await this.o.db.transaction().execute((trx) =>
              fanOut(trx, items.map(({ value, msg }) => ({ kind: msg.subject.slice(msg.subject.indexOf(marker) + marker.length), n: value, fallbackId: `${msg.subject}#${msg.seq}` })), builders, new Date(this.o.now())),
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
    this.wakeSender?.();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.wake();
    await Promise.allSettled(this.loops);
  }

  private async sendLoop(): Promise<void> {
    while (!this.abort.signal.aborted) {
      let claimed: DeliveryRow[] = [];
      try {
        claimed = await claimDueDeliveries(this.o.db, new Date(this.o.now()), SEND_CONCURRENCY, CLAIM_LEASE_MS);
        await Promise.all(claimed.map((d) => this.deliver(d)));
      } catch (err) {
        this.o.log.warn({ err: (err as Error).message }, 'delivery round failed; claims come due again after their lease');
      }
      if (claimed.length > 0) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, POLL_MS);
        this.wakeSender = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wakeSender = undefined;
    }
  }

  /** One attempt of one claimed delivery, then its record (and the endpoint's health) in one transaction. */
  async deliver(d: DeliveryRow): Promise<void> {
    const startedAt = this.o.now();
    const t0 = performance.now();
    // NOTE: webhook-timestamp is the wall clock, whatever clock schedules retries: receivers check it against theirs.
    const result = await sendDelivery(this.o.db, d, this.o.channels, Math.floor(Date.now() / 1000));
    const durationMs = performance.now() - t0;
    const now = new Date(this.o.now());
    if (result.kind === 'abandon') {
      await abandonDelivery(this.o.db, d.id, result.reason, now);
      return;
    }
    const outcome: AttemptOutcome = result.outcome;
    this.stats.sent++;
    if (outcome.ok) this.stats.succeeded++;
    else this.stats.failed++;
    if (outcome.ok) {
      const a = { deliveryId: d.id, orgId: d.org_id, claimedAttempts: d.attempts, httpStatus: outcome.status, durationMs, startedAt: new Date(startedAt), now };
      if (!(await recordSuccess(this.o.db, a, d.channel === 'webhook' ? d.endpoint_id : null))) this.o.log.warn({ delivery: d.id }, 'delivery claim went stale before its attempt was recorded');
      return;
    }
    await this.o.db.transaction().execute(async (trx) => {
      // NOTE: the endpoint row is locked only when an attempt failed (a success clears a streak only if there is one),
      // so concurrent successful sends to one endpoint never queue on its row.
      const webhookId = d.channel === 'webhook' ? d.endpoint_id : null;
      const ep = webhookId && !outcome.ok
        ? await trx.selectFrom('webhook_endpoints').select(['id', 'org_id', 'url', 'active', 'consecutive_failures', 'failing_since']).where('id', '=', webhookId).forUpdate().executeTakeFirst()
        : undefined;
      const h = ep ? afterAttempt({ consecutiveFailures: ep.consecutive_failures, failingSince: ep.failing_since?.getTime() ?? null }, outcome, now.getTime()) : undefined;
      const stopRetrying = h?.disable != null;
      const delay = outcome.ok || stopRetrying ? null : nextRetryDelayMs(d.attempts + 1, this.o.random(), outcome.retryAfterMs);
      const written = await recordAttempt(trx, {
        deliveryId: d.id, orgId: d.org_id, claimedAttempts: d.attempts, status: outcome.ok ? 'succeeded' : 'failed',
        httpStatus: outcome.status, error: outcome.ok ? null : outcome.error.slice(0, 1000), durationMs, startedAt: new Date(startedAt),
        nextAttemptAt: delay === null ? null : new Date(now.getTime() + delay), now,
      });
      if (!written) {
        this.o.log.warn({ delivery: d.id }, 'delivery claim went stale before its attempt was recorded');
        return;
      }
      if (webhookId && outcome.ok) {
        await trx.updateTable('webhook_endpoints').set({ consecutive_failures: 0, failing_since: null }).where('id', '=', webhookId)
          .where((eb) => eb.or([eb('consecutive_failures', '!=', 0), eb('failing_since', 'is not', null)])).execute();
      }
      if (!ep || !h) return;
      const disable = h.disable !== null && ep.active;
      await trx.updateTable('webhook_endpoints').set({
        consecutive_failures: h.consecutiveFailures, failing_since: h.failingSince === null ? null : new Date(h.failingSince),
        ...(disable ? { active: false, disabled_at: now, disabled_reason: h.disable, updated_at: now } : {}),
      }).where('id', '=', ep.id).execute();
      if (disable) {
        await openDegradation(trx, { orgId: ep.org_id, kind: 'endpoint_disabled', subject: ep.id, message: `webhook endpoint ${ep.url} disabled: ${h.disable}`, details: { endpoint_id: ep.id, url: ep.url, reason: h.disable }, at: now });
        this.o.log.warn({ endpoint: ep.id, reason: h.disable }, 'webhook endpoint disabled');
      }
    });
  }
}
