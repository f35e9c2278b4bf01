import type { Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { deliveries } from '../../shared/http/metrics.ts';
import { abandonDeliveries, lockClaimedDeliveries, recordAttempts, type AttemptRecord, type ClaimedDelivery } from '../../shared/db/queries/deliveries.queries.ts';
import { openDegradation } from '../../shared/db/queries/degradation.queries.ts';
import type { Logger } from '../../shared/logger.ts';
import type { SendResult } from './channels.ts';
import { afterAttempt, nextRetryDelayMs, type AttemptOutcome, type EndpointHealth } from './retry-policy.ts';

/** One attempt made (or a delivery given up without one), waiting to be recorded. */
export interface Finished {
  d: ClaimedDelivery;
  result: SendResult;
  startedAt: Date;
  durationMs: number;
}
type Failed = Finished & { result: { kind: 'attempt'; outcome: Extract<AttemptOutcome, { ok: false }> } };

/** Outcomes one write takes at most (the statement's arrays stay small). */
const MAX_PER_WRITE = 500;
/**
 * A write waits this long for more outcomes to join it, unless FULL_GROUP are already waiting: each statement's
 * fixed cost (planning, a WAL flush at commit, the round trip) is then shared by tens of deliveries instead of a few.
 * The receiver already has its request; only the record waits.
 */
const RECORD_LINGER_MS = 20;
/** A claim's worth of outcomes: written without lingering. */
const FULL_GROUP = 64;
/** A sender waits for the recorder once this many outcomes are unrecorded (the database is slower than the sends). */
const MAX_UNRECORDED = 256;

/**
 * Records the outcomes of a dispatcher's sends in groups (a group commit): the first outcome is written at once,
 * and whatever finishes while a write runs goes into the next one. Successes take one statement per group;
 * failures one transaction per group, which locks their endpoints to count failure streaks and disable an
 * endpoint (410, or 20 failures in a row over 5 days). Until its write commits, a finished attempt is like one
 * in flight: a dispatcher killed then leaves it claimed, and it is sent again (same webhook-id) when the lease ends.
 */
export class OutcomeRecorder {
  private readonly db: Kysely<Database>;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly onWrite: (group: readonly Finished[]) => void;
  private pending: Finished[] = [];
  private writing: Promise<void> | undefined;
  /** Ends the current linger early (the group is full). */
  private endLinger: (() => void) | undefined;

  constructor(o: { db: Kysely<Database>; log: Logger; now: () => number; random: () => number; onWrite?: (group: readonly Finished[]) => void }) {
    this.db = o.db;
    this.log = o.log;
    this.now = o.now;
    this.random = o.random;
    this.onWrite = o.onWrite ?? (() => {});
  }

  /** Queues one outcome; waits only while too many are unrecorded. */
  async add(f: Finished): Promise<void> {
    this.pending.push(f);
    this.writing ??= this.writeAll();
    if (this.pending.length >= FULL_GROUP) this.endLinger?.();
    if (this.pending.length >= MAX_UNRECORDED) await this.writing;
  }

  /** Resolves once every queued outcome is written (or its write failed and was logged). */
  async drain(): Promise<void> {
    this.endLinger?.();
    while (this.writing) await this.writing;
  }

  private linger(): Promise<void> {
    return new Promise<void>((resolve) => {
      const end = () => {
        clearTimeout(t);
        this.endLinger = undefined;
        resolve();
      };
      const t = setTimeout(end, RECORD_LINGER_MS);
      this.endLinger = end;
    });
  }

  private async writeAll(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        if (this.pending.length < FULL_GROUP) await this.linger();
        const group = this.pending.splice(0, MAX_PER_WRITE);
        await this.write(group).catch((err: unknown) => {
          this.log.warn({ err: (err as Error).message, deliveries: group.length }, 'recording delivery attempts failed; their claims come due again after the lease');
        });
        this.onWrite(group);
      }
    } finally {
      this.writing = undefined;
    }
  }

  private async write(group: Finished[]): Promise<void> {
    const now = new Date(this.now());
    const abandoned = group.flatMap((f) => (f.result.kind === 'abandon' ? [{ id: f.d.id, reason: f.result.reason }] : []));
    if (abandoned.length > 0) {
      await abandonDeliveries(this.db, abandoned, now);
      for (const f of group) if (f.result.kind === 'abandon') deliveries.inc({ channel: f.d.channel, outcome: 'abandoned' });
    }
    const failed = group.filter((f): f is Failed => f.result.kind === 'attempt' && !f.result.outcome.ok);
    // NOTE: failures first: a success of the same group then clears the endpoint's streak (a streak is only ever
    // under-counted, never made to disable an endpoint that has just answered).
    if (failed.length > 0) await this.writeFailures(failed, now);
    const succeeded = group.filter((f) => f.result.kind === 'attempt' && f.result.outcome.ok);
    if (succeeded.length === 0) return;
    const written = await recordAttempts(this.db, succeeded.map((f) => this.record(f, null)), now);
    this.warnStale(succeeded, written);
    for (const f of succeeded) if (written.has(f.d.id)) deliveries.inc({ channel: f.d.channel, outcome: 'succeeded' });
  }

  private record(f: Finished, nextAttemptAt: Date | null): AttemptRecord {
    const outcome = (f.result as { outcome: AttemptOutcome }).outcome;
    return {
      deliveryId: f.d.id, claimedAttempts: f.d.attempts, status: outcome.ok ? 'succeeded' : 'failed', httpStatus: outcome.status,
      error: outcome.ok ? null : outcome.error.slice(0, 1000), durationMs: f.durationMs, startedAt: f.startedAt, nextAttemptAt,
    };
  }

  /** Failed attempts: retry times, endpoint streaks and disabling, in one transaction for the group. */
  private async writeFailures(failed: Failed[], now: Date): Promise<void> {
    const counted = await this.db.transaction().execute(async (trx) => {
      const ours = await lockClaimedDeliveries(trx, failed.map((f) => ({ id: f.d.id, attempts: f.d.attempts })));
      this.warnStale(failed, ours);
      const live = failed.filter((f) => ours.has(f.d.id));
      const webhookOf = (f: Failed) => (f.d.channel === 'webhook' ? f.d.endpoint_id : null);
      const endpointIds = [...new Set(live.map(webhookOf).filter((id): id is string => id !== null))].sort();
      // Locked in id order, so two dispatchers recording failures to the same endpoints never deadlock.
      const endpoints = endpointIds.length === 0 ? [] : await trx.selectFrom('webhook_endpoints')
        .select(['id', 'org_id', 'url', 'active', 'consecutive_failures', 'failing_since'])
        .where('id', 'in', endpointIds).orderBy('id').forUpdate().execute();
      const streaks = new Map(endpoints.map((ep) => [ep.id, {
        ep, health: { consecutiveFailures: ep.consecutive_failures, failingSince: ep.failing_since?.getTime() ?? null } as EndpointHealth, disable: null as string | null,
      }]));
      const records = live.map((f) => {
        const streak = streaks.get(webhookOf(f) ?? '');
        let stopRetrying = false;
        if (streak) {
          const h = afterAttempt(streak.health, f.result.outcome, now.getTime());
          streak.health = { consecutiveFailures: h.consecutiveFailures, failingSince: h.failingSince };
          stopRetrying = h.disable !== null;
          streak.disable ??= h.disable;
        }
        const delay = stopRetrying ? null : nextRetryDelayMs(f.d.attempts + 1, this.random(), f.result.outcome.retryAfterMs);
        return this.record(f, delay === null ? null : new Date(now.getTime() + delay));
      });
      await recordAttempts(trx, records, now);
      for (const { ep, health, disable: reason } of streaks.values()) {
        const disable = reason !== null && ep.active;
        await trx.updateTable('webhook_endpoints').set({
          consecutive_failures: health.consecutiveFailures, failing_since: health.failingSince === null ? null : new Date(health.failingSince),
          ...(disable ? { active: false, disabled_at: now, disabled_reason: reason, updated_at: now } : {}),
        }).where('id', '=', ep.id).execute();
        if (disable) {
          await openDegradation(trx, { orgId: ep.org_id, kind: 'endpoint_disabled', subject: ep.id, message: `webhook endpoint ${ep.url} disabled: ${reason}`, details: { endpoint_id: ep.id, url: ep.url, reason }, at: now });
          this.log.warn({ endpoint: ep.id, reason }, 'webhook endpoint disabled');
        }
      }
      return live.map((f, i) => ({ channel: f.d.channel, outcome: records[i].nextAttemptAt === null ? 'failed' : 'retrying' }));
    });
    // Counted after the commit: a rolled-back record is retried by its lease and counted then.
    for (const c of counted) deliveries.inc(c);
  }

  private warnStale(group: Finished[], written: Set<string>): void {
    for (const f of group) if (!written.has(f.d.id)) this.log.warn({ delivery: f.d.id }, 'delivery claim went stale before its attempt was recorded');
  }
}
